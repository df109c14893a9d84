import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Whether the request presents `Authorization: Bearer <token>` (compared in constant time). */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !/^bearer /i.test(header)) return false;
  const given = Buffer.from(header.slice(7).trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
