import type { IncomingMessage } from 'node:http';

export type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 413 | 415 | 499; code: string; message: string };

/**
 * Reads and parses a JSON request body: JSON content type (when one is given), the size
 * limit, valid JSON. What the JSON must contain is the protocol's to check.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    return fail(415, 'unsupported_media_type', `expected content-type: application/json, got "${type}"`);
  }
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return tooLarge(maxBytes);
  const raw = await readBody(req, maxBytes);
  if (raw === 'too_large') return tooLarge(maxBytes);
  if (raw === 'client_gone') return fail(499, 'client_abort', 'the client hung up before its body was complete');
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) };
  } catch (err) {
    return fail(400, 'invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** The whole body; 'too_large' as soon as it passes `maxBytes`; 'client_gone' if the upload broke off. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too_large' | 'client_gone'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.resume(); // drain the rest so the 413 can be read by the client
        resolve('too_large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    // An aborted upload or bad chunked framing: the client is gone, nothing to answer.
    req.once('error', () => resolve('client_gone'));
  });
}

function tooLarge(maxBytes: number): BodyResult {
  return fail(413, 'body_too_large', `request body is larger than max_body_bytes (${maxBytes})`);
}

function fail(status: 400 | 413 | 415 | 499, code: string, message: string): BodyResult {
  return { ok: false, status, code, message };
}
