import { type ChildProcess, type SpawnOptions, spawn, spawnSync } from 'node:child_process';
import { createConnection, createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/**
 * A command in a network namespace of its own (`unshare -n`, loopback only), reaching nothing
 * but the addresses a test lets it: each target ADDR:PORT is bridged to the same ADDR:PORT in
 * the test's namespace through a unix socket in `dir` (test/helpers/netns-bridge.mjs on the
 * inside, bridgeOut on the outside). Used for programs that would otherwise phone home
 * (a real browser, Gemini CLI).
 */

const BRIDGE = fileURLToPath(new URL('./netns-bridge.mjs', import.meta.url));

export interface Target {
  host: string;
  port: number;
}

/** Why a network namespace cannot be made here, or null when it can. */
export function netnsUnavailable(): string | null {
  if (spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up']).status !== 0)
    return 'cannot make a network namespace with loopback up (unshare -n needs root; `ip` is in iproute2)';
  return null;
}

/** The outside ends of the bridges to `targets` (the sockets in `dir` netns-bridge.mjs connects to); `heads` collects each request head carried. */
export function bridgeTargets(dir: string, targets: Target[], heads: Map<string, string[]> = new Map()): Promise<Server[]> {
  return Promise.all(targets.map((t) => bridgeOut(t, join(dir, `${t.host}_${t.port}.sock`), heads)));
}

/** Spawns `command` in a new network namespace, its targets bridged in through unix sockets in `dir` (each served by bridgeOut). */
export function spawnInNetns(dir: string, targets: Target[], command: string[], opts: SpawnOptions = {}): ChildProcess {
  const inner = ['ip link set lo up && exec "$@"', 'sh', process.execPath, BRIDGE, dir, ...targets.map((t) => `${t.host}:${t.port}`), '--', ...command];
  return spawn('unshare', ['-n', 'sh', '-c', ...inner], { ...opts, detached: true });
}

/** The outside end of one bridge: the unix socket, piped to target's TCP port here. */
function bridgeOut(target: Target, path: string, heads: Map<string, string[]>): Promise<Server> {
  const key = `${target.host}:${target.port}`;
  const server = createServer((socket) => {
    const upstream = createConnection({ host: target.host, port: target.port });
    socket.on('data', (chunk: Buffer) => {
      // Keep-alive connections carry several requests: every chunk that starts with a request line is one.
      const text = chunk.toString('latin1');
      if (!/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(text)) return;
      const end = text.indexOf('\r\n\r\n');
      heads.set(key, [...(heads.get(key) ?? []), end === -1 ? text : text.slice(0, end)]);
    });
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

/** Kills the namespace's whole process group. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
  await exited;
}
