import { request } from 'undici';
import type { Provider } from '../config/schema.js';

/**
 * Whether something answers HTTP at the provider's base URL: a GET of `{base_url}/models`
 * answered with any status within `timeoutMs`. A 401 or 404 still means a server is there.
 */
export async function isReachable(provider: Pick<Provider, 'base_url'>, timeoutMs = 1_000): Promise<boolean> {
  try {
    const { body } = await request(`${provider.base_url.replace(/\/+$/, '')}/models`, {
      method: 'GET',
      signal: AbortSignal.timeout(timeoutMs),
      // No keep-alive: a probe must not leave an idle socket holding the process open.
      reset: true,
    });
    // The status was the answer; the body is only drained so the socket can close.
    await body.dump().catch(() => undefined);
    return true;
  } catch {
    return false;
  }
}
