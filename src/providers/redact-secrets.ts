import type { Provider } from '../config/schema.js';

/**
 * Upstream messages can echo credentials ("Incorrect API key provided: sk-…"): the key and
 * any secret-looking extra header value are cut out of every message.
 */
export function redactSecrets(text: string, provider: Provider): string {
  const secrets = Object.entries(provider.headers ?? {})
    .filter(([name, value]) => /auth|key|token|secret/i.test(name) && value.length > 0)
    .map(([, value]) => value.replace(/^Bearer\s+/i, ''));
  if (provider.api_key) secrets.push(provider.api_key);
  let redacted = text;
  for (const secret of secrets.filter((s) => s.length >= 4)) redacted = redacted.split(secret).join('[redacted]');
  return redacted;
}
