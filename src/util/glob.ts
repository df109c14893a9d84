/**
 * Globs with one wildcard: `*` matches any run of characters (none too); everything else is
 * literal. Route aliases (`claude-*`, `gpt-5*`) match model names as written; header globs
 * (`x-custom-*`) match header names case-insensitively, as HTTP header names are.
 * Compiled once (at config load), tested per request.
 */
export type GlobMatcher = (text: string) => boolean;

export interface GlobOptions {
  ignoreCase?: boolean;
}

/** A matcher that is true when `text` matches any of `patterns` (none: never true). */
export function compileGlobs(patterns: readonly string[], opts: GlobOptions = {}): GlobMatcher {
  if (patterns.length === 0) return () => false;
  const source = patterns.map((pattern) => pattern.split('*').map(escapeRegExp).join('.*')).join('|');
  const regexp = new RegExp(`^(?:${source})$`, opts.ignoreCase ? 'is' : 's');
  return (text) => regexp.test(text);
}

export function matchesGlob(pattern: string, text: string, opts: GlobOptions = {}): boolean {
  return compileGlobs([pattern], opts)(text);
}

/** Header-name globs: case-insensitive. */
export function compileHeaderGlobs(patterns: readonly string[]): GlobMatcher {
  return compileGlobs(patterns, { ignoreCase: true });
}

/** An HTTP header name (RFC 9110 token characters) in which `*` is the wildcard. */
export function isHeaderGlob(pattern: string): boolean {
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(pattern);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
