import type { z } from 'zod';
import { describeSchema, schemaAt, type JsonSchema } from './describe-schema.js';
import { formatPath, type ConfigProblem, type PathSegment } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord, valueAt } from './raw-data.js';
import { hideSecrets, isSecretPath } from './redact.js';
import { closestMatch } from './suggest.js';

type Issue = z.core.$ZodIssue;

/**
 * One problem per thing wrong, from zod's issues. Issues under `reported` paths (already reported
 * another way, e.g. a value whose variable is missing) are dropped. A quoted value has `secrets`
 * hidden before it is cut short, so no part of one shows.
 */
export function schemaProblems(
  issues: readonly Issue[],
  data: unknown,
  report: Reporter,
  reported: readonly (readonly PathSegment[])[],
  secrets: readonly string[],
): ConfigProblem[] {
  const suggested = suggestedKeys(issues);
  const problems: ConfigProblem[] = [];
  for (const issue of issues) {
    const path = issue.path.filter(isPathSegment);
    if (reported.some((prefix) => startsWith(path, prefix))) continue;
    // `tierz:` already says "did you mean tiers?"; "missing key tiers" would only repeat it.
    if (issue.code === 'invalid_type' && suggested.has(formatPath(path)) && valueAt(data, path) === undefined) continue;
    problems.push(...issueProblems(issue, path, data, report, secrets));
  }
  return problems;
}

function issueProblems(issue: Issue, path: PathSegment[], data: unknown, report: Reporter, secrets: readonly string[]): ConfigProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => report.at('key', [...path, key], unknownKeyMessage(key, path)));
  }
  const value = valueAt(data, path);
  const expected = schemaAt(path);
  if (path.length === 0 && value == null) {
    return [report.at('value', path, `the file is empty; expected ${describeSchema(expected)}`)];
  }
  if (value === undefined && isRecord(valueAt(data, path.slice(0, -1)))) {
    const key = String(path[path.length - 1]);
    const what = expected ? `: expected ${describeSchema(expected)}` : '';
    return [report.at('parent', path, `missing key "${key}"${what}`)];
  }
  return [report.at('value', path, mismatchMessage(issue, expected, value, isSecretPath(path), secrets))];
}

function mismatchMessage(issue: Issue, expected: JsonSchema | undefined, value: unknown, secret: boolean, secrets: readonly string[]): string {
  // The schema words its own messages in lower case; zod's defaults are capitalised and vaguer.
  const own = /^[a-z]/.test(issue.message) || !expected;
  return `${own ? issue.message : `expected ${describeSchema(expected)}`}, got ${describeValue(value, secret, secrets)}`;
}

/** Formatted paths of the keys that unknown keys will be said to be typos of. */
function suggestedKeys(issues: readonly Issue[]): Set<string> {
  const suggested = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const parent = issue.path.filter(isPathSegment);
    for (const key of issue.keys) {
      const suggestion = closestMatch(key, allowedKeys(parent));
      if (suggestion) suggested.add(formatPath([...parent, suggestion]));
    }
  }
  return suggested;
}

function allowedKeys(parent: readonly PathSegment[]): string[] {
  return Object.keys(schemaAt(parent)?.properties ?? {});
}

function unknownKeyMessage(key: string, parent: readonly PathSegment[]): string {
  const allowed = allowedKeys(parent);
  const where = parent.length > 0 ? formatPath(parent) : 'the top level';
  const suggestion = closestMatch(key, allowed);
  const hint = suggestion ? `did you mean "${suggestion}"?` : `expected one of: ${allowed.join(', ')}`;
  return `unknown key "${key}" in ${where}; ${hint}`;
}

export function describeValue(value: unknown, secret: boolean, secrets: readonly string[] = []): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'an empty value';
  if (Array.isArray(value)) return value.length > 0 ? 'a list' : 'an empty list';
  if (typeof value === 'object') return 'a map';
  if (secret) return `a ${typeof value} (value hidden)`;
  if (typeof value === 'string') {
    if (value === '') return 'an empty string';
    const shown = hideSecrets(value, secrets);
    return JSON.stringify(shown.length > 60 ? `${shown.slice(0, 57)}...` : shown);
  }
  return String(value);
}

function isPathSegment(segment: PropertyKey): segment is PathSegment {
  return typeof segment === 'string' || typeof segment === 'number';
}

function startsWith(path: readonly PathSegment[], prefix: readonly PathSegment[]): boolean {
  return prefix.length <= path.length && prefix.every((segment, index) => String(path[index]) === String(segment));
}
