import type { Vector, VectorEncoding } from '../core/embedding-codec.js';

/*
 * One vector, whichever way an answer wrote it: JSON numbers, or base64 of little-endian
 * float32 (OpenAI's `encoding_format: base64`). A vector read off an answer stays its bytes (the
 * JSON array as written: a view of the answer, not a copy) or its base64 text until a client
 * that wants it the other way is written its answer: a batch split and joined, or written in
 * another protocol's shape, copies its vectors' bytes once and parses no number.
 */

const COMMA = 0x2c;

/** Its width: elements, or (base64) the float32s its bytes hold. */
export function vectorWidth(vector: Vector): number {
  if ('base64' in vector) return base64Width(vector.base64);
  if ('json' in vector) return arrayElements(vector.json);
  return vector.length;
}

/** The elements of a JSON array of numbers, `[…]` (numbers have no comma of their own). */
function arrayElements(bytes: Buffer): number {
  let commas = 0;
  for (let at = bytes.indexOf(COMMA); at !== -1; at = bytes.indexOf(COMMA, at + 1)) commas++;
  if (commas > 0) return commas + 1;
  for (let i = 1; i < bytes.length - 1; i++) if (bytes[i] > 0x20) return 1;
  return 0;
}

/** Float32s in a base64 text: its decoded bytes over 4, read from its length and padding. */
export function base64Width(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor(((text.length * 3) / 4 - padding) / 4);
}

/** Its numbers (base64 decoded as little-endian float32, whatever this machine's byte order). */
export function vectorNumbers(vector: Vector): readonly number[] | Float32Array {
  if ('json' in vector) return JSON.parse(vector.json.toString('latin1')) as number[];
  if (!('base64' in vector)) return vector;
  const bytes = Buffer.from(vector.base64, 'base64');
  const floats = new Float32Array(bytes.length >>> 2);
  for (let i = 0; i < floats.length; i++) floats[i] = bytes.readFloatLE(i * 4);
  return floats;
}

/** Its base64 text (numbers written as little-endian float32: what OpenAI's SDK decodes). */
export function vectorBase64(vector: Vector): string {
  if ('base64' in vector) return vector.base64;
  const numbers = vectorNumbers(vector);
  const bytes = Buffer.allocUnsafe(numbers.length * 4);
  for (let i = 0; i < numbers.length; i++) bytes.writeFloatLE(numbers[i], i * 4);
  return bytes.toString('base64');
}

/** The vector as JSON text in `encoding`: an array of numbers, or a base64 string. */
export function vectorJson(vector: Vector, encoding: VectorEncoding): string {
  if (encoding === 'base64') return `"${vectorBase64(vector)}"`;
  if ('json' in vector) return vector.json.toString('latin1');
  const numbers = vectorNumbers(vector);
  return JSON.stringify(numbers instanceof Float32Array ? Array.from(numbers) : numbers);
}

/**
 * A whole answer written piece by piece: its own text, and each vector in `encoding` — a vector
 * still in its answer's bytes goes in as those bytes (no string made of them) — joined once.
 */
export class AnswerWriter {
  private readonly chunks: Buffer[] = [];
  private text = '';

  constructor(private readonly encoding: VectorEncoding) {}

  write(text: string): this {
    this.text += text;
    return this;
  }

  vector(vector: Vector): this {
    if (this.encoding === 'float' && 'json' in vector) {
      this.flush();
      this.chunks.push(vector.json);
    } else {
      this.text += vectorJson(vector, this.encoding);
    }
    return this;
  }

  done(): Buffer {
    this.flush();
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
  }

  private flush(): void {
    if (this.text === '') return;
    this.chunks.push(Buffer.from(this.text));
    this.text = '';
  }
}
