import { isMap, isScalar, isSeq, type Document } from 'yaml';
import type { PathSegment } from './errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** A `${...}` that could not be substituted; offset is the scalar's start in the source. */
export interface EnvIssue {
  path: PathSegment[];
  offset: number;
  message: string;
}

export interface Expansion {
  text: string;
  /** Variables referenced without a default and not set. */
  missing: string[];
  /** `${...}` pieces that are not `${NAME}` or `${NAME:-default}`. */
  malformed: string[];
  /** Every variable referenced, set or not. */
  variables: string[];
  /** True when the whole input was exactly one `${...}` expression. */
  whole: boolean;
}

// `$${` (escape), `${NAME}` / `${NAME:-default}`, or any other `${...` (malformed).
const REFERENCE = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}|\$\{[^}]*\}?/g;
const SINGLE_REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$/;
const INTEGER = /^-?\d+$/;

/** Substitutes `${NAME}` and `${NAME:-default}` in one string; `$${` stands for a literal `${`. */
export function expandString(text: string, env: Env): Expansion {
  const missing: string[] = [];
  const malformed: string[] = [];
  const variables: string[] = [];
  const expanded = text.replace(REFERENCE, (match: string, name: string | undefined, withDefault: string | undefined, fallback: string | undefined) => {
    if (match === '$${') return '${';
    if (name === undefined) {
      malformed.push(match);
      return match;
    }
    variables.push(name);
    const value = env[name];
    // Like the shell: `:-` also applies when the variable is set but empty.
    if (withDefault !== undefined) return value ? value : (fallback ?? '');
    if (value !== undefined) return value;
    missing.push(name);
    return match;
  });
  return { text: expanded, missing, malformed, variables, whole: SINGLE_REFERENCE.test(text) };
}

export interface SubstituteOptions {
  /** Paths whose value must stay a string even when it looks like an integer (e.g. api_key). */
  keepString?: (path: readonly PathSegment[]) => boolean;
}

export interface Substitution {
  issues: EnvIssue[];
  /** Every variable referenced anywhere in the document. */
  variables: Set<string>;
}

/**
 * Substitutes environment variables in every scalar value of a parsed YAML document, in place.
 * Keys are left alone. A scalar that was one `${...}` and expands to an integer becomes a number,
 * so `port: ${PORT:-4141}` works, unless `keepString` says that path holds a string.
 */
export function substituteEnv(doc: Document, env: Env, options: SubstituteOptions = {}): Substitution {
  const issues: EnvIssue[] = [];
  const variables = new Set<string>();

  const visit = (node: unknown, path: PathSegment[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        visit(pair.value, [...path, key]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visit(item, [...path, index]));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('${')) {
      const offset = node.range?.[0] ?? 0;
      const expansion = expandString(node.value, env);
      expansion.variables.forEach((name) => variables.add(name));
      for (const name of expansion.missing) {
        issues.push({
          path,
          offset,
          message: `environment variable ${name} is not set; set it, or give a default: \${${name}:-default}`,
        });
      }
      for (const piece of expansion.malformed) {
        issues.push({
          path,
          offset,
          message: `malformed variable reference "${piece}": expected \${NAME} or \${NAME:-default} (write $\${ for a literal \${)`,
        });
      }
      const numeric = expansion.whole && INTEGER.test(expansion.text) && Number.isSafeInteger(Number(expansion.text));
      node.value = numeric && !options.keepString?.(path) ? Number(expansion.text) : expansion.text;
    }
  };

  visit(doc.contents, []);
  return { issues, variables };
}
