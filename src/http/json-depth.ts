const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** How deep a request body's JSON may nest: deeper, and code that recurses over it (JSON.stringify) overflows the stack. */
export const MAX_JSON_DEPTH = 1000;

/**
 * True when the JSON text nests objects and arrays deeper than `limit`. One pass over the
 * bytes without recursion, before anything parses or walks the body; strings are skipped
 * with indexOf, so a body of long prompts costs little. Only valid JSON matters: invalid
 * text is rejected by the parser anyway (V8's JSON.parse does not recurse).
 */
export function nestsDeeperThan(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  const n = bytes.length;
  // Valid JSON deeper than `limit` has at least limit + 1 openers and as many closers.
  if (n < 2 * (limit + 1)) return false;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = afterString(bytes, i + 1);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
    i++;
  }
  return false;
}

/** The index after the quote that closes a string whose contents start at `from`. */
function afterString(bytes: Uint8Array, from: number): number {
  const n = bytes.length;
  let at = from;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return n;
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    for (let k = quote - 1; k >= at && bytes[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}
