import type { Vector, VectorEncoding } from '../core/embedding-codec.js';

/*
 * One vector, whichever way an answer wrote it: JSON numbers, or base64 of little-endian
 * float32 (OpenAI's `encoding_format: base64`). A vector read as base64 stays base64 until a
 * client that wants numbers is written its answer.
 */

/** Its width: elements, or (base64) the float32s its bytes hold. */
export function vectorWidth(vector: Vector): number {
  return 'base64' in vector ? base64Width(vector.base64) : vector.length;
}

/** Float32s in a base64 text: its decoded bytes over 4, read from its length and padding. */
export function base64Width(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor(((text.length * 3) / 4 - padding) / 4);
}

/** Its numbers (base64 decoded as little-endian float32, whatever this machine's byte order). */
export function vectorNumbers(vector: Vector): readonly number[] | Float32Array {
  if (!('base64' in vector)) return vector;
  const bytes = Buffer.from(vector.base64, 'base64');
  const floats = new Float32Array(bytes.length >>> 2);
  for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * 4);
  return floats;
}

/** Its base64 text (numbers written as little-endian float32: what OpenAI's SDK decodes). */
export function vectorBase64(vector: Vector): string {
  if ('base64' in vector) return vector.base64;
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i], i * 4);
  return bytes.toString('base64');
}

/** The vector as JSON text in `encoding`: an array of numbers, or a base64 string. */
export function vectorJson(vector: Vector, encoding: VectorEncoding): string {
  if (encoding === 'base64') return `"${vectorBase64(vector)}"`;
  const numbers = vectorNumbers(vector);
  return JSON.stringify(numbers instanceof Float32Array ? Array.from(numbers) : numbers);
}
