import type { IncomingHttpHeaders } from 'node:http';
import { NEVER_FORWARDED_HEADERS, type Provider } from '../../config/schema.js';
import { compileHeaderGlobs, type GlobMatcher } from '../../util/glob.js';
import { withoutHopByHop } from '../../util/hop-by-hop.js';
import { withCredential } from './credential.js';
import type { ClientHeaders } from './types.js';

/**
 * The headers every upstream call carries whatever its protocol: the content type, the client
 * headers the provider opted into (`forward_headers`), what the provider's config adds, and
 * the client's Idempotency-Key. Credentials are the wire's to add (withCredential): the
 * client's go only to a from_client provider, whatever a glob says.
 */
export function baseHeaders(provider: Provider, stream: boolean, client: ClientHeaders): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
  };
  if (provider.forward_headers && client.incoming) Object.assign(headers, forwarded(provider, client.incoming));
  if (provider.headers) Object.assign(headers, provider.headers);
  if (client.idempotencyKey) headers['idempotency-key'] = client.idempotencyKey;
  return headers;
}

/** OpenAI-style auth: a Bearer token when the provider has a key; the client's own credential for a from_client provider; nothing otherwise. */
export function bearerAuth(headers: Record<string, string>, provider: Provider, client: ClientHeaders): Record<string, string> {
  return withCredential(headers, provider, client.credential, 'authorization');
}

const matchers = new WeakMap<Provider, GlobMatcher>();

/** The client headers `provider.forward_headers` names, minus credentials and per-hop ones. */
function forwarded(provider: Provider, incoming: IncomingHttpHeaders): Record<string, string> {
  let matches = matchers.get(provider);
  if (!matches) {
    matches = compileHeaderGlobs(provider.forward_headers ?? []);
    matchers.set(provider, matches);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(withoutHopByHop(incoming))) {
    if (!matches(name) || NEVER_FORWARDED_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}
