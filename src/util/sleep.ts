import type { ClientLifetime } from './client-lifetime.js';

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
