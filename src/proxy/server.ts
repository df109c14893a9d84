import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import type { Config } from '../config/schema.js';
import { HealthBoard } from '../health/health-board.js';
import { ProviderPools } from '../providers/pools.js';
import { TelemetryBus } from '../telemetry/bus.js';
import { Metrics } from '../telemetry/metrics.js';
import { attachRequestLog } from '../telemetry/request-log.js';
import type { AppContext } from './app-context.js';
import { handleRequest } from './handle-request.js';
import { ShutdownError } from './shutdown.js';

export interface ProxyOptions {
  config: Config;
  /** Overrides config.server.host / port (the CLI's --host / --port). */
  host?: string;
  port?: number;
  /** Where the JSON-lines request log goes; none when omitted. */
  log?: Writable;
  /** The weight draw's dice (tests pass a seeded one). */
  random?: () => number;
}

/** The proxy's lifecycle: listen, then drain on close. */
export class ProxyServer {
  readonly app: AppContext;
  private readonly server: Server;
  private readonly host: string;
  private readonly port: number;

  constructor(options: ProxyOptions) {
    const { config } = options;
    this.host = options.host ?? config.server.host;
    this.port = options.port ?? config.server.port;
    if (!isLoopback(this.host) && !config.server.auth_token) {
      throw new Error(`refusing to listen on ${this.host} without server.auth_token: anyone who can reach it could spend your provider keys; set auth_token or listen on 127.0.0.1`);
    }
    const telemetry = new TelemetryBus();
    this.app = {
      config,
      telemetry,
      pools: new ProviderPools(config),
      health: new HealthBoard(telemetry),
      metrics: new Metrics(telemetry),
      random: options.random ?? Math.random,
      inFlight: new Set(),
      draining: false,
      startedAt: Date.now(),
    };
    if (options.log) attachRequestLog(telemetry, options.log);
    this.server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
      void handleRequest(req, res, this.app);
    });
    this.server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy();
    });
  }

  listen(): Promise<{ url: string; port: number }> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
        const { port } = this.server.address() as AddressInfo;
        const host = this.host.includes(':') ? `[${this.host}]` : this.host;
        resolve({ url: `http://${host}:${port}`, port });
      });
    });
  }

  /**
   * Stops accepting, lets requests in flight finish for up to `graceMs`, then aborts the rest
   * (their upstream requests with them) and closes every connection.
   */
  async close(graceMs = 10_000): Promise<void> {
    this.app.draining = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    await this.waitForInFlight(graceMs);
    // Past the grace period: streams still open get a stream_interrupted event, then the sockets close.
    for (const abort of this.app.inFlight) abort.abort(new ShutdownError());
    await this.waitForInFlight(200);
    this.server.closeAllConnections();
    await closed;
    await this.app.pools.close();
  }

  private async waitForInFlight(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (this.app.inFlight.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      this.server.closeIdleConnections();
    }
  }
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
