import type { IncomingMessage } from 'node:http';
import type { ServerConfig } from '../config/schema.js';
import type { ErrorSpec } from '../protocols/core/types.js';
import { hostName, isLoopbackHost } from '../util/loopback.js';

/**
 * What keeps web pages out (docs/security.md, "Browsers and web pages"). A page the
 * user opens can send requests to 127.0.0.1; two header comparisons refuse them:
 * - Host: a DNS-rebinding page reaches us under its own name (`evil.example:4141`). Without
 *   auth_token only loopback names and allowed_hosts pass; with it, the token is the gate.
 * - Origin / Sec-Fetch-Site: a cross-site page's fetch carries its Origin (any POST does, even
 *   a "simple" text/plain one that skips the preflight); a navigation or <img> carries
 *   Sec-Fetch-Site: cross-site. Only cors_origins pass. Clients that are not browsers send neither.
 */
export function browserRefusal(req: IncomingMessage, server: ServerConfig): ErrorSpec | null {
  const { host, origin } = req.headers;
  // No Host at all is HTTP/1.0 (Node refuses HTTP/1.1 without one): not a browser.
  if (!server.auth_token && host !== undefined && !isAllowedHost(host, server.allowed_hosts)) {
    const message = `Host "${host}" is not this machine: llm-route answers loopback names only (a web page may be trying DNS rebinding); a reverse proxy's name goes in server.allowed_hosts`;
    return { status: 403, kind: 'forbidden', code: 'host_not_allowed', message };
  }
  if (origin !== undefined) {
    if (server.cors_origins.includes(origin)) return null;
    const message = `requests from web pages are refused (Origin "${origin}"); a browser-based client's origin goes in server.cors_origins`;
    return { status: 403, kind: 'forbidden', code: 'origin_not_allowed', message };
  }
  if (req.headers['sec-fetch-site'] === 'cross-site') {
    return { status: 403, kind: 'forbidden', code: 'origin_not_allowed', message: 'requests from other sites are refused (Sec-Fetch-Site: cross-site)' };
  }
  return null;
}

function isAllowedHost(header: string, allowed: string[]): boolean {
  // The usual case first, without parsing: the address llm-route listens on.
  if (header.startsWith('127.0.0.1:') || header.startsWith('localhost:')) return true;
  const name = hostName(header);
  return isLoopbackHost(name) || allowed.includes(name);
}
