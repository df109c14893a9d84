import type { ClientProtocol } from '../../src/telemetry/events.js';

export interface ProtocolError {
  message: string;
  /** OpenAI: error.type; Anthropic: error.type. */
  type: string;
  code: unknown;
}

/**
 * Checks that `body` is an error in the shape `protocol`'s clients read (chat, responses:
 * OpenAI's `{"error":{message,type,code}}`; messages: Anthropic's `{"type":"error","error":{type,message}}`;
 * ollama: `{"error":"…"}` and nothing else; gemini: Google's `{"error":{code,message,status}}`) and returns its
 * error object (Gemini's status as its type); throws saying what is wrong otherwise.
 */
export function protocolError(protocol: ClientProtocol, body: unknown): ProtocolError {
  const text = JSON.stringify(body);
  if (typeof body !== 'object' || body === null) throw new Error(`not a JSON object: ${text}`);
  const outer = body as { type?: unknown; error?: unknown };
  if (protocol === 'ollama') {
    if (typeof outer.error !== 'string' || outer.error === '' || Object.keys(body).length !== 1) throw new Error(`not Ollama's {"error":"…"}: ${text}`);
    return { message: outer.error, type: 'ollama', code: undefined };
  }
  const error = outer.error as { message?: unknown; type?: unknown; code?: unknown; status?: unknown } | undefined;
  if (typeof error !== 'object' || error === null) throw new Error(`no error object: ${text}`);
  if (protocol === 'gemini') {
    if (Object.keys(body).length !== 1) throw new Error(`a Gemini error is {"error":{…}} alone: ${text}`);
    if (typeof error.code !== 'number' || typeof error.message !== 'string' || error.message === '') throw new Error(`not Gemini's {code, message}: ${text}`);
    if (typeof error.status !== 'string' || !/^[A-Z_]+$/.test(error.status)) throw new Error(`error.status is not Google's canonical status: ${text}`);
    return { message: error.message, type: error.status, code: error.code };
  }
  if (typeof error.message !== 'string' || error.message === '') throw new Error(`error.message missing: ${text}`);
  if (typeof error.type !== 'string' || error.type === '') throw new Error(`error.type missing: ${text}`);
  if (protocol === 'messages') {
    if (outer.type !== 'error') throw new Error(`an Anthropic error has type "error": ${text}`);
    if (!/_error$/.test(error.type)) throw new Error(`not an Anthropic error type: ${text}`);
  } else {
    if ('type' in outer) throw new Error(`an OpenAI error has no top-level type: ${text}`);
    if (!('code' in error)) throw new Error(`error.code missing: ${text}`);
  }
  return { message: error.message, type: error.type, code: error.code };
}

/** The endpoint each client protocol posts to. */
export const ENDPOINT: Record<ClientProtocol, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  ollama: '/api/chat',
  gemini: '/v1beta/models/chat:generateContent',
};

/** A valid request body for `protocol` (route `chat`). */
export function validBody(protocol: ClientProtocol, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (protocol === 'responses') return { model: 'chat', input: 'hi', ...extra };
  if (protocol === 'messages') return { model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...extra };
  if (protocol === 'ollama') return { model: 'chat', stream: false, messages: [{ role: 'user', content: 'hi' }], ...extra };
  // Gemini's route is in the path, and streaming is its own endpoint (streamPath).
  if (protocol === 'gemini') {
    const { stream: _stream, ...rest } = extra;
    return { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], ...rest };
  }
  return { model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...extra };
}

/** The path a request in `protocol` goes to, streamed or not (only Gemini's differ: streaming is an endpoint of its own). */
export function streamPath(protocol: ClientProtocol, stream: boolean): string {
  return protocol === 'gemini' && stream ? '/v1beta/models/chat:streamGenerateContent?alt=sse' : ENDPOINT[protocol];
}
