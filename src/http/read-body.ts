import type { IncomingMessage } from 'node:http';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';
import { whenRequestExpires } from './request-deadline.js';

export type BodyResult =
  | { ok: true; value: unknown /** The body's size as received. */; bytes: number }
  | { ok: false; status: 400 | 408 | 413 | 415 | 499; code: string; message: string };

/**
 * Reads and parses a JSON request body: JSON content type (when one is given, unless `anyType`:
 * a protocol whose server reads any body as JSON), the size limit, the time limit, valid JSON
 * no deeper than MAX_JSON_DEPTH. What the JSON must contain is the protocol's to check.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number, anyType = false): Promise<BodyResult> {
  const type = req.headers['content-type'];
  if (type !== undefined && !anyType && !isJsonType(type)) {
    return fail(415, 'unsupported_media_type', `expected content-type: application/json, got "${type}"`);
  }
  const raw = await readBody(req, maxBytes);
  if (raw === 'too_large') return fail(413, 'body_too_large', `request body is larger than max_body_bytes (${maxBytes})`);
  if (raw === 'timeout') return fail(408, 'request_timeout', 'the request body did not arrive within server.request_timeout_ms');
  if (raw === 'client_gone') return fail(499, 'client_abort', 'the client hung up before its body was complete');
  if (nestsDeeperThan(raw)) return fail(400, 'json_too_deep', `request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')), bytes: raw.length };
  } catch (err) {
    return fail(400, 'invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** application/json, or a JSON type like application/vnd.api+json; parameters (charset) allowed. */
export function isJsonType(type: string): boolean {
  return /^application\/([\w.+-]+\+)?json\b/i.test(type);
}

/**
 * The failures whose answer closes the connection: a 408 (a client too slow to wait for), a
 * 413 (its upload drained, or too big to be), a 415 (answered without reading the body).
 */
export function closesConnection(result: BodyResult): boolean {
  return !result.ok && (result.status === 413 || result.status === 408 || result.status === 415);
}

/**
 * How much of an oversized upload is read and thrown away before the 413 goes out: a client
 * still sending when the connection closes gets a reset instead of the answer. Past this,
 * the 413 goes out at once.
 */
export const MAX_DISCARD_BYTES = 64 * 1024 * 1024;

export type BodyRead = Buffer | 'too_large' | 'timeout' | 'client_gone';

/**
 * The whole body. Past `maxBytes` it is 'too_large', answered only once the rest of the upload
 * has been read and discarded (up to MAX_DISCARD_BYTES more), so the client can read the
 * answer. 'timeout' when server.request_timeout_ms ran out first; 'client_gone' if the upload
 * broke off.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    const discardUpTo = maxBytes + MAX_DISCARD_BYTES;
    const settle = (result: BodyRead): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      forget();
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (tooLarge) {
        if (size > discardUpTo) settle('too_large');
        return;
      }
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        if (size > discardUpTo) settle('too_large');
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(tooLarge ? 'too_large' : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    // An aborted upload or bad chunked framing: the client is gone, nothing to answer.
    const onError = (): void => settle('client_gone');
    const forget = whenRequestExpires(req.socket, () => settle(tooLarge ? 'too_large' : 'timeout'));
    const declared = Number(req.headers['content-length']);
    if (declared > maxBytes) {
      tooLarge = true;
      // Too much to read through: answer now (the client may see a reset instead).
      if (declared > discardUpTo) return settle('too_large');
    }
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
  });
}

function fail(status: 400 | 408 | 413 | 415 | 499, code: string, message: string): BodyResult {
  return { ok: false, status, code, message };
}
