import type { IncomingMessage } from 'node:http';
import { nodeCrypto } from './node-crypto.js';

/** Whether the request presents `Authorization: Bearer <token>` (compared in constant time). */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^bearer /i.test(header)) return false;
  return sameSecret(header.slice(7).trim(), token);
}

/** The header in which a client sends llm-route's own token when Authorization and x-api-key carry its own credential. */
export const LLM_ROUTE_TOKEN_HEADER = 'x-llm-route-token';

/** Where Gemini's clients send a key: a header, or the query's `key` (docs/client-credentials.md). */
export const GOOGLE_KEY_HEADER = 'x-goog-api-key';
export const GOOGLE_KEY_PARAM = 'key';

/**
 * No token configured, or the request presents it: in x-llm-route-token (then the headers a key
 * comes in are the client's own credential, see protocols/core/credential.ts), else as a Bearer
 * token, as Anthropic's x-api-key, or as a Gemini client sends its key (x-goog-api-key, `?key=`:
 * Gemini CLI sends no other header easily).
 */
export function presentsToken(req: IncomingMessage, token: string | undefined, query?: URLSearchParams): boolean {
  if (!token) return true;
  const own = req.headers[LLM_ROUTE_TOKEN_HEADER];
  if (own !== undefined) return typeof own === 'string' && sameSecret(own, token);
  if (hasBearer(req, token)) return true;
  for (const name of ['x-api-key', GOOGLE_KEY_HEADER]) {
    const key = req.headers[name];
    if (typeof key === 'string' && sameSecret(key, token)) return true;
  }
  const param = query?.get(GOOGLE_KEY_PARAM);
  return typeof param === 'string' && sameSecret(param, token);
}

/**
 * Compares two secrets in time that depends on neither: both are hashed first, so the
 * comparison runs over 32 bytes whatever their lengths (a length check would tell them apart).
 */
export function sameSecret(given: string, expected: string): boolean {
  return nodeCrypto().timingSafeEqual(sha256(given), expectedDigest(expected));
}

// The expected side is a configured token: hashed once, not on every request.
const expectedDigests = new Map<string, Buffer>();
const MAX_EXPECTED = 16;

function expectedDigest(token: string): Buffer {
  let digest = expectedDigests.get(token);
  if (digest === undefined) {
    if (expectedDigests.size >= MAX_EXPECTED) expectedDigests.clear(); // tokens replaced by reloads
    digest = sha256(token);
    expectedDigests.set(token, digest);
  }
  return digest;
}

function sha256(text: string): Buffer {
  return nodeCrypto().createHash('sha256').update(text, 'utf8').digest();
}
