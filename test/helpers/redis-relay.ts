import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP relay in front of a redis-server, to make network trouble without losing Redis's
 * data (a killed redis-server comes back empty): `cut()` is a partition (connections dropped,
 * new ones closed at once), `stall()` lets commands through but holds Redis's replies back
 * (a command that runs on Redis but times out for the caller), `heal()` ends either.
 */
export class RedisRelay {
  private readonly pairs = new Set<{ client: Socket; upstream: Socket; held: Buffer[] }>();
  private mode: 'open' | 'cut' | 'stalled' = 'open';

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<RedisRelay> {
    let relay: RedisRelay | null = null;
    const server = createServer((client) => relay?.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    relay = new RedisRelay(server, typeof address === 'object' && address ? address.port : 0);
    return relay;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  cut(): void {
    this.mode = 'cut';
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    this.pairs.clear();
  }

  stall(): void {
    this.mode = 'stalled';
  }

  heal(): void {
    this.mode = 'open';
    for (const pair of this.pairs) for (const chunk of pair.held.splice(0)) pair.client.write(chunk);
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.mode === 'cut') {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    const pair = { client, upstream, held: [] as Buffer[] };
    this.pairs.add(pair);
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(targetPort, '127.0.0.1');
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk: Buffer) => (this.mode === 'stalled' ? pair.held.push(chunk) : client.write(chunk)));
  }
}
