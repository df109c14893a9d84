import type { Tier } from '../config/schema.js';

/**
 * How long to wait before try number `attempt + 1` on the same tier: exponential backoff with
 * full jitter, or the upstream's Retry-After when it fits in `max_ms`. null: fail over now.
 */
export function retryDelayMs(retry: Tier['retry'], attempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number | null {
  if (retryAfterMs !== undefined) return retryAfterMs <= retry.max_ms ? retryAfterMs : null;
  const ceiling = Math.min(retry.max_ms, retry.base_ms * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}
