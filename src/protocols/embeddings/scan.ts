import { base64Width } from './vectors.js';

/*
 * Reading a relayed embeddings answer off its bytes, without parsing it: a 1,000-input answer is
 * megabytes of numbers, and a relay needs only how many vectors it holds, the first one's width
 * and the tokens the server read. Numbers contain no quote, bracket or comma of their own, and
 * inside JSON strings a quote is always escaped, so an unescaped `"key"` followed by a colon is a
 * key, and a vector's elements are its commas plus one. Each step is a native indexOf.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const COMMA = 0x2c;

/** Where the value of the first `key` (a quoted key's bytes) at or after `from` starts; -1 when there is none. */
export function valueAt(body: Buffer, key: Buffer, from = 0): number {
  for (let at = body.indexOf(key, from); at !== -1; at = body.indexOf(key, at + key.length)) {
    if (at > 0 && body[at - 1] === BACKSLASH) continue;
    const colon = skipSpace(body, at + key.length);
    if (body[colon] !== COLON) continue; // the text as a value ("object":"embedding"), not a key
    return skipSpace(body, colon + 1);
  }
  return -1;
}

/** How many times `key` is a key in the body. */
export function countKeys(body: Buffer, key: Buffer): number {
  let count = 0;
  for (let at = valueAt(body, key); at !== -1; at = valueAt(body, key, at)) count++;
  return count;
}

/** The elements of the array of numbers that opens at `at` (its commas plus one; 0 for `[]`); -1 when no such array is there. */
export function arrayWidth(body: Buffer, at: number): number {
  if (body[at] !== OPEN) return -1;
  const end = body.indexOf(CLOSE, at);
  if (end === -1) return -1;
  if (skipSpace(body, at + 1) === end) return 0;
  let commas = 0;
  for (let comma = body.indexOf(COMMA, at); comma !== -1 && comma < end; comma = body.indexOf(COMMA, comma + 1)) commas++;
  return commas + 1;
}

/** The vectors in the array of arrays that opens at `at` (Ollama's `embeddings`), and the first one's width; null when it is not one. */
export function nestedArrays(body: Buffer, at: number): { count: number; width: number } | null {
  if (body[at] !== OPEN) return null;
  let i = skipSpace(body, at + 1);
  if (body[i] === CLOSE) return { count: 0, width: 0 };
  let count = 0;
  let width = 0;
  for (;;) {
    if (body[i] !== OPEN) return null;
    const end = body.indexOf(CLOSE, i);
    if (end === -1) return null;
    if (count === 0) width = arrayWidth(body, i);
    count++;
    i = skipSpace(body, end + 1);
    if (body[i] === CLOSE) return { count, width };
    if (body[i] !== COMMA) return null;
    i = skipSpace(body, i + 1);
  }
}

/**
 * The vectors of an answer, in the order written: each `key`'s value, a JSON array of numbers
 * (its bytes as written, a view of the body) or a base64 string; null when one is neither (the
 * caller parses the answer instead). What a batch split and joined, or written in another
 * protocol's shape, needs of its vectors without decoding a number.
 */
export function vectorTexts(body: Buffer, key: Buffer): ({ json: Buffer } | { base64: string })[] | null {
  const vectors: ({ json: Buffer } | { base64: string })[] = [];
  for (let at = valueAt(body, key); at !== -1; at = valueAt(body, key, at)) {
    if (body[at] === OPEN) {
      const end = body.indexOf(CLOSE, at + 1);
      if (end === -1) return null;
      vectors.push({ json: body.subarray(at, end + 1) });
      continue;
    }
    const end = body[at] === QUOTE ? body.indexOf(QUOTE, at + 1) : -1;
    if (end === -1) return null;
    const text = body.toString('latin1', at + 1, end);
    if (text.includes('\\')) return null;
    vectors.push({ base64: text });
  }
  return vectors;
}

/** The number values of each `key`, in the order written (OpenAI's `index`es). */
export function numbersOf(body: Buffer, key: Buffer): number[] {
  const numbers: number[] = [];
  for (let at = valueAt(body, key); at !== -1; at = valueAt(body, key, at)) {
    let end = at;
    while (end < body.length && isNumberByte(body[end])) end++;
    numbers.push(Number(body.toString('latin1', at, end)));
  }
  return numbers;
}

/** Each array of the array of arrays that opens at `at` (Ollama's `embeddings`), as its bytes; null when it is not one. */
export function nestedTexts(body: Buffer, at: number): { json: Buffer }[] | null {
  if (body[at] !== OPEN) return null;
  const vectors: { json: Buffer }[] = [];
  let i = skipSpace(body, at + 1);
  if (body[i] === CLOSE) return vectors;
  for (;;) {
    if (body[i] !== OPEN) return null;
    const end = body.indexOf(CLOSE, i);
    if (end === -1) return null;
    vectors.push({ json: body.subarray(i, end + 1) });
    i = skipSpace(body, end + 1);
    if (body[i] === CLOSE) return vectors;
    if (body[i] !== COMMA) return null;
    i = skipSpace(body, i + 1);
  }
}

/** The float32s of the base64 string that opens at `at`; -1 when no string is there. */
export function base64At(body: Buffer, at: number): number {
  if (body[at] !== QUOTE) return -1;
  const end = body.indexOf(QUOTE, at + 1);
  if (end === -1) return -1;
  // Base64 has no quote; a `\/` (an encoder that escapes slashes) is read as JSON.
  const text = body.toString('latin1', at + 1, end);
  return base64Width(text.includes('\\') ? (JSON.parse(`"${text}"`) as string) : text);
}

/** The number value of the last `key` in the body (top-level counts come last: Ollama's prompt_eval_count); undefined when there is none. */
export function lastNumber(body: Buffer, key: Buffer): number | undefined {
  for (let at = body.lastIndexOf(key); at !== -1; at = at === 0 ? -1 : body.lastIndexOf(key, at - 1)) {
    const value = valueAt(body, key, at);
    if (value === -1) continue;
    let end = value;
    while (end < body.length && isNumberByte(body[end])) end++;
    const number = Number(body.toString('latin1', value, end));
    return end > value && Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}

/** Whether the body is shaped like a JSON object (its first and last non-space bytes). */
export function looksLikeObject(body: Buffer): boolean {
  const first = skipSpace(body, 0);
  let last = body.length - 1;
  while (last >= 0 && isSpace(body[last])) last--;
  return body[first] === 0x7b && body[last] === 0x7d;
}

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(body: Buffer, i: number): number {
  while (i < body.length && isSpace(body[i])) i++;
  return i;
}
