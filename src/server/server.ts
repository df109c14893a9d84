import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigWatcher } from '../control/config-watcher.js';
import type { RollbackWatcher } from '../control/rollback-watcher.js';
import type { HealthChecker } from '../health/health-checker.js';
import { tierNotice } from '../health/tier-notice.js';
import type { TierUnavailable } from '../telemetry/events.js';
import type { Dispatcher } from 'undici';
import { ProviderPools } from '../providers/pools.js';
import type { UsageLog } from '../usage/usage-log.js';
import type { AppContext, ReloadResult } from '../control/app-context.js';
import { answerClientError } from './client-error.js';
import { answerExpectContinue, handleRequest } from './handle-request.js';
import { ShutdownError } from '../proxy/shutdown.js';
import { settleWhenQuiet } from '../runtime/settle-when-quiet.js';
import type { StateBackend } from '../state/types.js';
import type { TraceLink } from './trace-link.js';
import { assertSafeHost, checkInterval, LISTEN_BACKLOG } from './listening.js';
import { preloadSavers, type ProxyOptions, wireApp } from './wire-app.js';

export type { ProxyOptions } from './wire-app.js';

/** The proxy's lifecycle: listen, apply reloads, drain on close (its parts are joined in wire-app.ts). */
export class ProxyServer {
  readonly app: AppContext;
  private readonly server: Server;
  private readonly host: string;
  private readonly port: number;
  private readonly rollbacks: RollbackWatcher;
  private readonly checker: HealthChecker;
  readonly usage: UsageLog;
  readonly state: StateBackend;
  private watcher: ConfigWatcher | null = null;
  private readonly checksOnListen: boolean;
  private checksStarted = false;
  private stopSettling: (() => void) | null = null;
  private readonly readConfig: (file: string) => Config;
  private readonly traces: TraceLink;

  constructor(options: ProxyOptions) {
    const { config } = options;
    this.host = options.host ?? config.server.host;
    this.port = options.port ?? config.server.port;
    this.readConfig = options.readConfig ?? ((file) => loadConfig(file));
    assertSafeHost(this.host, config);
    const wired = wireApp(options, () => this.reload());
    this.app = wired.app;
    this.usage = wired.usage;
    this.state = wired.state;
    this.checker = wired.checker;
    this.rollbacks = wired.rollbacks;
    this.traces = wired.traces;
    if (options.watch) this.watcher = new ConfigWatcher(config.file, () => this.reload());
    // Not before the port is ours: a server that cannot listen must send no upstream traffic.
    this.checksOnListen = options.activeChecks === true;
    const limits = config.server;
    this.server = createServer(
      {
        keepAliveTimeout: 65_000,
        maxHeaderSize: limits.max_header_bytes,
        // Node's own clock for slow clients: headers and body of a request within request_timeout_ms.
        headersTimeout: limits.request_timeout_ms,
        requestTimeout: limits.request_timeout_ms,
        connectionsCheckingInterval: checkInterval(limits.request_timeout_ms),
      },
      (req, res) => {
        void handleRequest(req, res, this.app);
      },
    );
    this.server.on('clientError', answerClientError);
    // An upload that will be refused is refused before the client sends it.
    this.server.on('checkContinue', (req, res) => answerExpectContinue(req, res, this.app));
  }

  async listen(): Promise<{ url: string; port: number }> {
    await this.traces.ready(); // its first requests traced, when traces are on
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ port: this.port, host: this.host, backlog: LISTEN_BACKLOG }, () => {
        this.server.off('error', reject);
        if (this.checksOnListen) this.startActiveChecks();
        const { port } = this.server.address() as AddressInfo;
        const host = this.host.includes(':') ? `[${this.host}]` : this.host;
        resolve({ url: `http://${host}:${port}`, port });
      });
    });
  }

  /** The start-up notice (health/tier-notice.ts): each tier that cannot answer goes on the bus; the caller prints them. */
  async announceUnavailableTiers(opts: { dispatcher?: Dispatcher; signal?: AbortSignal } = {}): Promise<TierUnavailable[]> {
    const notices = await tierNotice(this.app.config, opts);
    for (const notice of notices) this.app.telemetry.emit(notice);
    return notices;
  }

  /** Starts active health checks and warm-ups (idempotent; stopped by close()). */
  startActiveChecks(): void {
    if (this.app.draining || this.checksStarted) return;
    this.checksStarted = true;
    this.checker.start();
  }

  /**
   * Once quiet, gives back what start-up and the latest requests left in this thread's heap
   * (src/runtime/settle-when-quiet.ts). For a process's own proxy (serve, exec), not an embedded
   * one; close() stops it.
   */
  settleWhenQuiet(): void {
    this.stopSettling ??= settleWhenQuiet({ lastActive: () => this.app.lastArrival, busy: () => this.app.handling > 0 || this.app.inFlight.size > 0 });
  }

  /**
   * Re-reads the tier file. A valid one replaces the config for new requests (streams in
   * flight keep theirs); an invalid one is reported and the running config keeps serving.
   */
  reload(): ReloadResult {
    const file = this.app.config.file;
    let config: Config;
    try {
      config = this.readConfig(file);
      assertSafeHost(this.host, config);
    } catch (err) {
      const problems = err instanceof ConfigError ? err.format().split('\n') : [(err as Error).message];
      this.app.telemetry.emit({ type: 'reload', ok: false, file, problems });
      return { ok: false, problems };
    }
    this.applyConfig(config);
    this.app.telemetry.emit({ type: 'reload', ok: true, file, routes: config.routes.size });
    return { ok: true, config };
  }

  /** Swaps in a new config: pools for changed providers, health and weights for the new tier set. */
  applyConfig(config: Config): void {
    const app = this.app;
    const previousPools = app.pools;
    app.pools = new ProviderPools(config, previousPools);
    previousPools.retire();
    app.health.configure(config);
    app.weights.configure(config);
    app.metrics.configure(config);
    this.applyLimits(config);
    this.rollbacks.configure(config);
    this.checker.configure(config);
    preloadSavers(config);
    this.usage.configure(config);
    this.state.configure(config);
    this.traces.apply(config);
    app.config = config;
  }

  /** The request limits Node enforces: new connections take a new header limit, every request the new timeout. */
  private applyLimits(config: Config): void {
    const { max_header_bytes, request_timeout_ms } = config.server;
    // Read by Node for each new connection (not in @types/node).
    (this.server as Server & { maxHeaderSize: number }).maxHeaderSize = max_header_bytes;
    this.server.headersTimeout = request_timeout_ms;
    this.server.requestTimeout = request_timeout_ms;
  }

  /**
   * Stops accepting, lets requests in flight finish for up to `graceMs`, then aborts the rest
   * (their upstream requests with them) and closes every connection.
   */
  async close(graceMs = 10_000): Promise<void> {
    this.app.draining = true;
    this.stopSettling?.();
    this.watcher?.close();
    this.checker.stop();
    let allClosed = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve())).then(() => (allClosed = true));
    this.server.closeIdleConnections();
    // Also for requests that arrived but have not begun routing (an upload still coming in).
    await this.waitUntil(() => this.app.inFlight.size === 0 && this.app.handling === 0, graceMs);
    // Past the grace period: streams still open get a stream_interrupted event, then the sockets close,
    // each once its answer is written (a socket destroyed with the event still buffered would lose it).
    for (const abort of this.app.inFlight) abort.abort(new ShutdownError());
    await this.waitUntil(() => this.app.inFlight.size === 0, 200);
    await this.waitUntil(() => allClosed, 1_000);
    this.server.closeAllConnections();
    await closed;
    await this.app.pools.close();
    await this.state.close();
    await this.usage.close();
    await this.traces.close();
  }

  /** Waits for `done` (or `ms`), closing connections as they fall idle. */
  private async waitUntil(done: () => boolean, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      this.server.closeIdleConnections();
    }
  }
}
