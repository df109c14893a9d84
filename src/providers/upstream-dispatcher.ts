import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Dispatcher, Pool } from 'undici';
import { Client, EnvHttpProxyAgent } from '../util/undici.js';
import type { Provider } from '../config/schema.js';
import { createStaleAwarePool, withStaleRetry } from '../util/stale-socket-pool.js';

// node:tls is required for a `ca_file:` only: loading it costs a process ~6 MB (Node 24), and
// undici loads it itself only once it opens an https connection.
const requireLazily = createRequire(import.meta.url);
const systemCas = (): readonly string[] => (requireLazily('node:tls') as typeof import('node:tls')).rootCertificates;

/** HTTPS_PROXY / HTTP_PROXY (either case) is set: remote providers go through it (NO_PROXY aside). */
export function proxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return [env.https_proxy, env.HTTPS_PROXY, env.http_proxy, env.HTTP_PROXY].some((v) => v !== undefined && v !== '');
}

/**
 * The CAs a provider with `ca_file:` trusts: the system's, NODE_EXTRA_CA_CERTS's (a `ca` option
 * replaces Node's defaults, extra certificates included) and the file's.
 */
function trustedCas(provider: Provider): string[] | undefined {
  if (!provider.ca_file) return undefined;
  const extra = process.env.NODE_EXTRA_CA_CERTS ? [readFileSync(process.env.NODE_EXTRA_CA_CERTS, 'utf8')] : [];
  return [...systemCas(), ...extra, readFileSync(provider.ca_file, 'utf8')];
}

/** What a provider's dispatcher is made of: a reload keeps it when this is unchanged. */
export function dispatcherShape(provider: Provider, connectTimeout: number): string {
  const proxied = !provider.local && proxyConfigured();
  return `${new URL(provider.base_url).origin}|${connectTimeout}|${provider.ca_file ?? ''}|${proxied ? 'proxy' : 'direct'}`;
}

/**
 * One provider's keep-alive dispatcher, with the stale-socket retry around it (a request that
 * meets a socket the server had closed goes again on a connection of its own: see
 * util/stale-socket-pool.ts). Loopback is always direct: a stale-aware pool. A remote provider
 * with a proxy in the environment gets undici's EnvHttpProxyAgent, which tunnels (CONNECT) to
 * the proxy unless NO_PROXY names the host; its connections are stale-aware pools too, kept
 * alive per origin.
 */
export function createUpstreamDispatcher(provider: Provider, connectTimeout: number): Dispatcher {
  return withStaleRetry(keepAliveDispatcher(provider, connectTimeout), () => createFreshConnection(provider, connectTimeout));
}

function keepAliveDispatcher(provider: Provider, connectTimeout: number): Dispatcher {
  const ca = trustedCas(provider);
  const options: Pool.Options = {
    connectTimeout,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    headersTimeout: 0,
    bodyTimeout: 0,
    pipelining: 1,
    ...(ca ? { connect: { ca } } : {}),
  };
  if (provider.local || !proxyConfigured()) return createStaleAwarePool(new URL(provider.base_url).origin, options);
  return new EnvHttpProxyAgent({
    ...options,
    // Through the proxy, the provider's TLS is set by requestTls (`connect` is the tunnel's).
    ...(ca ? { requestTls: { ca } } : {}),
    factory: (origin: string | URL, opts: object) => createStaleAwarePool(origin, opts as Pool.Options),
  });
}

/**
 * A one-off connection for the retry after a stale pooled socket: the same route to the
 * provider (proxy, CAs) as its pool, closed by the retry when that request is done.
 */
export function createFreshConnection(provider: Provider, connectTimeout: number): Dispatcher {
  const ca = trustedCas(provider);
  const options = { connectTimeout, pipelining: 1, headersTimeout: 0, bodyTimeout: 0, ...(ca ? { connect: { ca } } : {}) };
  if (provider.local || !proxyConfigured()) return new Client(new URL(provider.base_url).origin, options);
  return new EnvHttpProxyAgent({ ...options, ...(ca ? { requestTls: { ca } } : {}) });
}
