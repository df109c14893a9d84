/**
 * Ids that only tell answers and requests apart in logs and clients (`x-request-id`,
 * `chatcmpl-…`, `msg_…`): unique, never secret, never trusted for anything. They come from
 * Math.random, which V8 seeds per process from the system's entropy, so a request's first id
 * does not wait for node:crypto to load (src/util/node-crypto.ts). Ids that decide who owns
 * something (a budget reservation, a rate-limit slot, an idempotency claim) use node:crypto.
 */

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function randomByte(): number {
  return Math.floor(Math.random() * 256);
}

/** A version-4 UUID's shape: 122 random bits. */
export function correlationUuid(): string {
  const bytes = Array.from({ length: 16 }, randomByte);
  bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.map((byte) => HEX[byte]);
  return `${hex.slice(0, 4).join('')}-${hex.slice(4, 6).join('')}-${hex.slice(6, 8).join('')}-${hex.slice(8, 10).join('')}-${hex.slice(10).join('')}`;
}

/** `length` base64url characters, 6 random bits each. */
export function correlationToken(length: number): string {
  let token = '';
  for (let i = 0; i < length; i++) token += BASE64URL[Math.floor(Math.random() * 64)];
  return token;
}
