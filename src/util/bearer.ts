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

/**
 * No token configured, or the request presents it: in x-llm-route-token (then Authorization and
 * x-api-key are the client's own credential, see protocols/core/credential.ts), else as a Bearer
 * token or as Anthropic's x-api-key.
 */
export function presentsToken(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const own = req.headers[LLM_ROUTE_TOKEN_HEADER];
  if (own !== undefined) return typeof own === 'string' && sameSecret(own, token);
  if (hasBearer(req, token)) return true;
  const key = req.headers['x-api-key'];
  return typeof key === 'string' && sameSecret(key, token);
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
