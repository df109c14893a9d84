import type { Provider } from '../config/schema.js';
import type { ClientHeaders } from './types.js';

/**
 * The headers every upstream call carries whatever its protocol: the content type, what the
 * provider's config adds, the headers the provider opted to forward from the client, and the
 * client's Idempotency-Key. Credentials are the wire's to add: the client's never go upstream.
 */
export function baseHeaders(provider: Provider, stream: boolean, client: ClientHeaders): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
  if (client.forwarded) Object.assign(headers, client.forwarded);
  if (provider.headers) Object.assign(headers, provider.headers);
  if (client.idempotencyKey) headers['idempotency-key'] = client.idempotencyKey;
  return headers;
}

/** OpenAI-style auth: a Bearer token when the provider has a key, nothing otherwise. */
export function bearerAuth(headers: Record<string, string>, provider: Provider): Record<string, string> {
  if (provider.api_key) headers.authorization = `Bearer ${provider.api_key}`;
  return headers;
}
