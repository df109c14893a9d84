/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection, not the message: a proxy
 * must not forward them either way. Proxy-Connection is not standard but still sent by some
 * clients (Go's httputil.ReverseProxy drops it too).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'trailers',
  'transfer-encoding',
  'upgrade',
]);

export type HeaderValue = string | string[] | number | undefined;

/** Whether `name` (any case) is one of the fixed hop-by-hop headers. */
export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name.toLowerCase());
}

/** The header names a `Connection` value lists (`Connection: close, x-foo` → close, x-foo), lower-cased. */
export function connectionTokens(value: HeaderValue): Set<string> {
  const tokens = new Set<string>();
  if (value === undefined) return tokens;
  for (const part of Array.isArray(value) ? value : [String(value)]) {
    for (const token of part.split(',')) {
      const name = token.trim().toLowerCase();
      if (name !== '') tokens.add(name);
    }
  }
  return tokens;
}

/**
 * `headers` without the hop-by-hop ones, those named in its `Connection` header, and unset
 * values; names keep their case. For request headers built for an upstream and for upstream
 * response headers relayed to a client.
 */
export function withoutHopByHop<V extends HeaderValue>(headers: Readonly<Record<string, V>>): Record<string, Exclude<V, undefined>> {
  const names = Object.keys(headers);
  const lower = names.map((name) => name.toLowerCase());
  let named: Set<string> | undefined;
  for (let i = 0; i < names.length; i++) {
    if (lower[i] !== 'connection') continue;
    named ??= new Set();
    for (const token of connectionTokens(headers[names[i]])) named.add(token);
  }
  const kept: Record<string, Exclude<V, undefined>> = {};
  for (let i = 0; i < names.length; i++) {
    const value = headers[names[i]];
    if (value === undefined || HOP_BY_HOP.has(lower[i]) || named?.has(lower[i])) continue;
    kept[names[i]] = value as Exclude<V, undefined>;
  }
  return kept;
}
