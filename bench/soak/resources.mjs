// What this process holds, for the soak's leak checks: its TCP sockets (from /proc, by the
// inodes of its own descriptors), its active handles and timers, its resident memory.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const STATES = {
  '01': 'ESTABLISHED',
  '02': 'SYN_SENT',
  '06': 'TIME_WAIT',
  '07': 'CLOSE',
  '08': 'CLOSE_WAIT',
  '0A': 'LISTEN',
  '04': 'FIN_WAIT1',
  '05': 'FIN_WAIT2',
  '09': 'LAST_ACK',
  '0B': 'CLOSING',
};

/** The socket inodes of this process's open descriptors. */
function ownSocketInodes() {
  const inodes = new Set();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** This process's TCP sockets: `{ localPort, remotePort, state }`. */
export function ownTcpSockets() {
  const inodes = ownSocketInodes();
  const sockets = [];
  for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9])) continue;
      sockets.push({ localPort: parseInt(f[1].split(':')[1], 16), remotePort: parseInt(f[2].split(':')[1], 16), state: STATES[f[3]] ?? f[3] });
    }
  }
  return sockets;
}

/** Active resources by type (process.getActiveResourcesInfo: handles, requests, timers). */
export function activeResources() {
  const counts = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/** Types whose count grew from `before` to `after`, with how many more. */
export function grownResources(before, after) {
  const grown = {};
  for (const [type, n] of Object.entries(after)) if (n > (before[type] ?? 0)) grown[type] = n - (before[type] ?? 0);
  return grown;
}

/** Resident memory in MiB after full collections (needs --expose-gc; without it, as it is). */
export async function settledRssMiB() {
  for (let i = 0; i < 3; i++) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage.rss() / (1024 * 1024);
}
