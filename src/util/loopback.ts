import { isIP } from 'node:net';

/** A host name or address on this machine: localhost, 127.0.0.0/8, ::1 (also IPv4-mapped). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost') return true;
  if (bare === '::1') return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/**
 * The name in a Host header, lower-cased and without its port: `localhost:4141` → `localhost`,
 * `[::1]:4141` → `[::1]` (brackets kept, as allowed_hosts and isLoopbackHost take it).
 */
export function hostName(header: string): string {
  const end = header.startsWith('[') ? header.indexOf(']') + 1 : header.indexOf(':');
  return (end <= 0 ? header : header.slice(0, end)).toLowerCase();
}

/**
 * A host on this machine or the local network (loopback, RFC 1918 / link-local IPv4, IPv6
 * unique-local and link-local, `.local` and single-label names): where a self-hosted model
 * server (llama.cpp, LM Studio, vLLM on a LAN box) may be, as opposed to a cloud API.
 */
export function isLocalNetworkHost(host: string): boolean {
  if (isLoopbackHost(host)) return true;
  const bare = (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
  const kind = isIP(bare);
  if (kind === 4) return /^(10\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.)/.test(bare);
  if (kind === 6) return /^f[cd]|^fe[89ab]/.test(bare);
  return !bare.includes('.') || bare.endsWith('.local');
}
