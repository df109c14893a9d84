import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Whether the request presents `Authorization: Bearer <token>` (compared in constant time). */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^bearer /i.test(header)) return false;
  return sameSecret(header.slice(7).trim(), token);
}

/**
 * Compares two secrets in time that depends on neither: both are hashed first, so the
 * comparison runs over 32 bytes whatever their lengths (a length check would tell them apart).
 */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
