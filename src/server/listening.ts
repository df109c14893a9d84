import type { Config } from '../config/schema.js';
import { isLoopbackHost } from '../util/loopback.js';

// How the proxy's server listens: its accept backlog, the addresses it may listen on, Node's check for slow clients.

/**
 * Connections the kernel holds for accept() (capped by net.core.somaxconn). Node's 511 overflowed
 * when 1,000 clients connected at once while the event loop was busy: the dropped SYNs came back
 * after the kernel's 1 s and 3 s retransmit, which was most of that bench's time to first content.
 */
export const LISTEN_BACKLOG = 4096;

/** How often Node looks for requests past their timeout: a tenth of it, at most every second. */
export function checkInterval(timeoutMs: number): number {
  return Math.max(10, Math.min(1_000, Math.floor(timeoutMs / 10)));
}

export function assertSafeHost(host: string, config: Config): void {
  if (!isLoopbackHost(host) && !config.server.auth_token) {
    throw new Error(
      `refusing to listen on ${host} without server.auth_token: anyone who can reach it could spend your provider keys; set auth_token or listen on 127.0.0.1`,
    );
  }
}
