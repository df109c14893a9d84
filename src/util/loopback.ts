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
