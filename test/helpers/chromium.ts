import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A real headless Chromium (Debian's `chromium`) in a network namespace of its own
 * (`unshare -n`, loopback only), so a page can reach nothing but the addresses a test lets
 * it: each target ADDR:PORT is bridged to the same ADDR:PORT in the test's namespace through
 * a unix socket (test/helpers/netns-bridge.mjs on the inside). The Host, Origin and every
 * other byte pass unchanged; the outside end keeps the head of each request it carried.
 */

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const BRIDGE = fileURLToPath(new URL('./netns-bridge.mjs', import.meta.url));

/** Why a real-browser test cannot run here, or null when it can. */
export function browserUnavailable(): string | null {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install -y chromium)`;
  if (spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up']).status !== 0)
    return 'cannot make a network namespace with loopback up (unshare -n needs root; `ip` is in iproute2)';
  return null;
}

export interface Target {
  host: string;
  port: number;
}

export interface Browser {
  /** The request heads (request line and headers) carried to each target, as `host:port`. */
  heads(target: Target): string[];
  /** Chromium's stderr so far (for a failing test's message). */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts Chromium on `url`, reaching only `targets`, with extra command-line flags. */
export async function launchChromium(url: string, targets: Target[], flags: string[] = []): Promise<Browser> {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-chromium-'));
  const heads = new Map<string, string[]>();
  const bridges = await Promise.all(targets.map((t) => bridgeOut(t, join(dir, `${t.host}_${t.port}.sock`), heads)));
  const chromium = [
    CHROMIUM,
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-dev-shm-usage',
    `--user-data-dir=${join(dir, 'profile')}`,
    ...flags,
    url,
  ];
  const inner = ['ip link set lo up && exec "$@"', 'sh', process.execPath, BRIDGE, dir, ...targets.map((t) => `${t.host}:${t.port}`), '--', ...chromium];
  const child = spawn('unshare', ['-n', 'sh', '-c', ...inner], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  return {
    heads: (t) => heads.get(`${t.host}:${t.port}`) ?? [],
    stderr: () => stderr,
    async close() {
      await stop(child);
      for (const b of bridges) b.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
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

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
  await exited;
}
