import { isAlias, isScalar, visit, type Document, type YAMLError } from 'yaml';
import type { ConfigProblem } from './errors.js';
import { keyText, rangeStart, type Reporter } from './positions.js';

/** The parser's errors (one per line, worded for a tier file) and aliases used before their anchor. */
export function syntaxProblems(doc: Document, text: string, report: Reporter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const reportedLines = new Set<number>();
  for (const error of doc.errors) {
    const problem = report.atOffset(error.pos[0], [], yamlMessage(error, doc, text));
    // Later errors on the same line are nearly always echoes of the first.
    if (reportedLines.has(problem.line)) continue;
    reportedLines.add(problem.line);
    problems.push(problem);
  }
  visit(doc, {
    Alias(_, alias) {
      if (alias.resolve(doc) !== undefined) return;
      const offset = alias.range?.[0] ?? 0;
      problems.push(report.atOffset(offset, [], `unknown alias *${alias.source}: define &${alias.source} before using it`));
    },
    Pair(_, pair) {
      // A map or list as a key would be turned into text (and yaml would warn on stderr).
      if (isPlainKey(doc, pair.key)) return;
      const offset = rangeStart(pair.key) ?? 0;
      problems.push(report.atOffset(offset, [], 'a key must be a plain name, not a map, a list or a tagged value'));
    },
  });
  return problems;
}

function isPlainKey(doc: Document, key: unknown): boolean {
  const node = isAlias(key) ? key.resolve(doc) : key;
  if (node === undefined || node === null) return true; // an empty key, or an unknown alias reported above
  return isScalar(node) && (node.value === null || typeof node.value !== 'object');
}

function yamlMessage(error: YAMLError, doc: Document, text: string): string {
  if (error.code === 'DUPLICATE_KEY') {
    return `duplicate key "${keyAt(doc, error.pos[0]) ?? '?'}": a key may appear only once in a map`;
  }
  if (error.code === 'MULTIPLE_DOCS') return 'the tier file must hold one YAML document, but a "---" starts another';
  // The parser gives up on very deep nesting with the engine's own words.
  if (error.message.includes('call stack')) return 'invalid YAML: nested too deeply';
  // Some messages quote source text, which could be a secret: leave the quote out.
  const message = `invalid YAML: ${error.message.replace(/:\s*".*"$/s, '')}`;
  const lineText = lineAround(text, error.pos[0]);
  return referenceInFlowMap(lineText) ? `${message}; quote \${...} inside { } maps, e.g. "\${VAR}"` : message;
}

/** A `${` after a `{` with no `}` between them; a scan, as a regular expression backtracks for long lines. */
function referenceInFlowMap(line: string): boolean {
  let open = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '$' && line[i + 1] === '{' && open) return true;
    if (c === '{') open = true;
    else if (c === '}') open = false;
  }
  return false;
}

function keyAt(doc: Document, offset: number): string | undefined {
  let found: string | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (rangeStart(pair.key) !== offset) return undefined;
      found = keyText(pair.key);
      return visit.BREAK;
    },
  });
  return found;
}

function lineAround(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  const end = text.indexOf('\n', offset);
  return text.slice(start, end === -1 ? undefined : end);
}
