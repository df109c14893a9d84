/**
 * Finds the top-level `"usage": {...}` object of a whole JSON answer without parsing the
 * answer: the usage is all the router needs from a body it relays unchanged, and parsing a
 * large body just for it costs more than the rest of the request. Inside JSON strings a quote
 * is always escaped, so an unescaped `"usage"` followed by a colon can only be a key.
 * Returns the object's text, null when there is no usage object, or 'not_json' when the body
 * is not even shaped like a JSON object.
 */
export function findUsageObject(body: Buffer): string | null | 'not_json' {
  return findTopLevelObject(body, KEY);
}

/** The same for another key whose value is an object (llama.cpp's `timings`, beside its usage). */
export function findTopLevelObject(body: Buffer, key: Buffer): string | null | 'not_json' {
  const first = firstNonSpace(body);
  const last = lastNonSpace(body);
  if (first === -1 || body[first] !== OPEN || body[last] !== CLOSE) return 'not_json';
  let from = body.length;
  for (;;) {
    const at = body.lastIndexOf(key, from);
    if (at <= 0) return null;
    from = at - 1;
    if (body[at - 1] === BACKSLASH) continue;
    let i = skipSpace(body, at + key.length);
    if (body[i] !== COLON) continue; // the string as a value, not a key
    i = skipSpace(body, i + 1);
    if (body[i] !== OPEN) return null; // "usage": null
    const end = matchingBrace(body, i);
    return end === -1 ? 'not_json' : body.toString('utf8', i, end + 1);
  }
}

const KEY = Buffer.from('"usage"');
const OPEN = 0x7b; // {
const CLOSE = 0x7d; // }
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** Index of the `}` closing the object that opens at `start`, skipping strings; -1 if none. */
function matchingBrace(body: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN) depth++;
    else if (c === CLOSE && --depth === 0) return i;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(body: Buffer, i: number): number {
  while (i < body.length && isSpace(body[i])) i++;
  return i;
}

function firstNonSpace(body: Buffer): number {
  const i = skipSpace(body, 0);
  return i < body.length ? i : -1;
}

function lastNonSpace(body: Buffer): number {
  let i = body.length - 1;
  while (i >= 0 && isSpace(body[i])) i--;
  return i;
}
