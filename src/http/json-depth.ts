const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** How deep a request body's JSON may nest: deeper, and code that recurses over it (JSON.stringify) overflows the stack. */
export const MAX_JSON_DEPTH = 1000;

/** Past this many bytes a string is skipped with indexOf; shorter ones (most keys and values) faster in the loop. */
const SHORT_STRING = 32;

/**
 * True when the JSON text nests objects and arrays deeper than `limit`. One pass over the
 * bytes without recursion, before anything parses or walks the body; long strings are skipped
 * with indexOf, so a body of long prompts costs little (a tenth of JSON.parse's time, or less).
 * Only valid JSON matters: invalid text is rejected by the parser anyway (V8's JSON.parse does
 * not recurse).
 */
export function nestsDeeperThan(bytes: Uint8Array, limit = MAX_JSON_DEPTH): boolean {
  const n = bytes.length;
  // Valid JSON deeper than `limit` has at least limit + 1 openers and as many closers.
  if (n < 2 * (limit + 1)) return false;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const c = bytes[i++];
    if (c === QUOTE) i = afterString(bytes, i);
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

/** The index after the quote that closes a string whose contents start at `from` (the end of the bytes when none does). */
function afterString(bytes: Uint8Array, from: number): number {
  const n = bytes.length;
  let i = from;
  for (const stop = Math.min(n, from + SHORT_STRING); i < stop; ) {
    const c = bytes[i++];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
  }
  // A long string: from quote to quote, escaped when an odd number of backslashes precede it.
  for (let at = i; ; ) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return n;
    let backslashes = 0;
    for (let k = quote - 1; k >= at && bytes[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}
