/**
 * Ids that only tell answers and requests apart in logs and clients (`x-request-id`,
 * `chatcmpl-…`, `msg_…`): unique, never secret, never trusted for anything. They come from
 * Math.random, which V8 seeds per process from the system's entropy, so a request's first id
 * does not wait for node:crypto to load (src/util/node-crypto.ts). Ids that decide who owns
 * something (a budget reservation, a rate-limit slot, an idempotency claim) use node:crypto.
 */

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function random32(): number {
  return Math.floor(Math.random() * 0x1_0000_0000);
}

/** A 32-bit number as eight hex digits. */
function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

/** A version-4 UUID's shape: 122 random bits. One per request that brought no id (~1.5 µs). */
export function correlationUuid(): string {
  const version4 = (random32() & 0xffff0fff) | 0x4000; // hex digit 13 is the version
  const variant = (random32() & 0x3fffffff) | 0x80000000; // hex digit 17 is 8, 9, a or b (RFC 9562)
  const hex = hex8(random32()) + hex8(version4) + hex8(variant) + hex8(random32());
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `length` base64url characters, 6 random bits each. */
export function correlationToken(length: number): string {
  let token = '';
  for (let i = 0; i < length; i++) token += BASE64URL[Math.floor(Math.random() * 64)];
  return token;
}
