import type { Provider } from '../config/schema.js';

/**
 * Upstream messages can echo credentials ("Incorrect API key provided: sk-…"): the key, any
 * secret-looking extra header value and `more` (the client's own credential, for a provider
 * with `api_key: from_client`) are cut out of every message.
 */
export function redactSecrets(text: string, provider: Provider, more: readonly string[] = []): string {
  const secrets = Object.entries(provider.headers ?? {})
    .filter(([name, value]) => /auth|key|token|secret/i.test(name) && value.length > 0)
    .map(([, value]) => value.replace(/^Bearer\s+/i, ''));
  if (provider.api_key) secrets.push(provider.api_key);
  secrets.push(...more);
  let redacted = text;
  for (const secret of secrets.filter((s) => s.length >= 4)) redacted = redacted.split(secret).join('[redacted]');
  return redacted;
}
