import type { Tier } from '../config/schema.js';
import type { ClientLifetime } from './client-lifetime.js';

/**
 * How long to wait before try number `attempt + 1` on the same tier: exponential backoff with
 * full jitter, or the upstream's Retry-After when it fits in `max_ms`. null: fail over now.
 */
export function retryDelayMs(retry: Tier['retry'], attempt: number, retryAfterMs: number | undefined, random: () => number = Math.random): number | null {
  if (retryAfterMs !== undefined) return retryAfterMs <= retry.max_ms ? retryAfterMs : null;
  const ceiling = Math.min(retry.max_ms, retry.base_ms * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Resolves after `ms`, or at once (false) when the client's request ends. The timer never outlives the wait. */
export function sleep(ms: number, client: ClientLifetime): Promise<boolean> {
  if (client.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      client.offAbort(onAbort);
      resolve(true);
    }, ms);
    client.onAbort(onAbort);
  });
}
