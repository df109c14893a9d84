import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';

/**
 * A real redis-server of the test's own, on a free loopback port (never 6379), with nothing
 * written to disk. It can be killed (SIGKILL, as a crash) and started again on the same port.
 */
export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Starts it (again) on its port; resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--loglevel', 'warning'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    child.stdout?.on('data', (d) => (output += String(d)));
    child.stderr?.on('data', (d) => (output += String(d)));
    // No redis-server on PATH (CI=true makes the Redis tests run regardless): say so plainly.
    child.once('error', (err) => {
      output += `cannot start redis-server (${(err as NodeJS.ErrnoException).code ?? err.message}): install it or put it on PATH`;
      if (this.child === child) this.child = null;
    });
    child.once('exit', () => {
      if (this.child === child) this.child = null;
    });
    const until = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (this.child !== child) throw new Error(`redis-server exited at start: ${output}`);
      if (Date.now() > until) throw new Error(`redis-server not ready on ${this.port}: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** SIGKILL: as a crash, nothing is saved. Resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async stop(): Promise<void> {
    await this.kill();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port === 6379 ? freePort().then(resolve, reject) : resolve(port)));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.write('PING\r\n');
      socket.once('data', (d) => {
        socket.destroy();
        resolve(String(d).startsWith('+PONG'));
      });
    });
    socket.once('error', () => resolve(false));
  });
}
