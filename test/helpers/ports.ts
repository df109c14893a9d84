import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';

/**
 * A loopback port held by a server of this test (it closes every connection at once), so a
 * command told to listen there finds it in use; `defer` closes it after the test.
 */
export async function busyPort(defer: (fn: () => unknown) => void): Promise<number> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as { port: number }).port;
}

/** A loopback port nothing listens on (one opened and closed again). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether a process with this pid exists (signal 0). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the process runs: not gone, and not a zombie. A process whose starter has exited is
 * collected by whatever adopted it, in its own time (seconds, in some containers); /proc says
 * meanwhile that it is a zombie. Without /proc (macOS): signal 0 alone.
 */
export function processRunning(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;
  }
}
