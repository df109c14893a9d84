import type { IncomingMessage } from 'node:http';

export type IngressResult =
  | { ok: true; body: Record<string, unknown> }
  | { ok: false; status: number; code: string; message: string };

/**
 * Reads and checks a chat request body: JSON content type, size limit, valid JSON object,
 * `model` and `messages` present. Everything else in it is passed upstream untouched.
 */
export async function readChatBody(req: IncomingMessage, maxBytes: number): Promise<IngressResult> {
  const type = req.headers['content-type'];
  if (type !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    return fail(415, 'unsupported_media_type', `expected content-type: application/json, got "${type}"`);
  }
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return tooLarge(maxBytes);
  const raw = await readBody(req, maxBytes);
  if (raw === 'too_large') return tooLarge(maxBytes);
  if (raw === 'client_gone') return fail(499, 'client_abort', 'the client hung up before its body was complete');

  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    return fail(400, 'invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(400, 'invalid_request', 'request body must be a JSON object');
  }
  const body = parsed as Record<string, unknown>;
  if (typeof body.model !== 'string' || body.model === '') {
    return fail(400, 'missing_model', '"model" is required: the name of a route');
  }
  if (!Array.isArray(body.messages)) {
    return fail(400, 'missing_messages', '"messages" is required and must be an array');
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    return fail(400, 'invalid_request', '"stream" must be a boolean');
  }
  return { ok: true, body };
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

function tooLarge(maxBytes: number): IngressResult {
  return fail(413, 'body_too_large', `request body is larger than max_body_bytes (${maxBytes})`);
}

function fail(status: number, code: string, message: string): IngressResult {
  return { ok: false, status, code, message };
}
