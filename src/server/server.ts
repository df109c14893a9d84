import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import { ConfigError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { ConfigWatcher } from '../control/config-watcher.js';
import { RollbackWatcher } from '../control/rollback-watcher.js';
import { WeightControl } from '../control/weights.js';
import { atMostEvery } from '../util/at-most-every.js';
import { HealthBoard } from '../health/health-board.js';
import { refreshFit } from '../fit/refresh-fit.js';
import { HealthChecker } from '../health/health-checker.js';
import { tierNotice } from '../health/tier-notice.js';
import type { TierUnavailable } from '../telemetry/events.js';
import type { Dispatcher } from 'undici';
import { ProviderPools } from '../providers/pools.js';
import { TelemetryBus } from '../telemetry/bus.js';
import { Metrics } from '../telemetry/metrics.js';
import { attachRequestLog } from '../telemetry/request-log.js';
import { UsageLog, type UsageLogOptions } from '../usage/usage-log.js';
// After the usage log, which prices rows too: imported before it, the pricing modules became a bundle file of their own (one more for serve to load).
import { SessionBoard } from '../control/session-board.js';
import type { AppContext, ReloadResult } from '../control/app-context.js';
import { answerClientError } from './client-error.js';
import { answerExpectContinue, handleRequest } from './handle-request.js';
import { ShutdownError } from '../proxy/shutdown.js';
import { StreamSlots } from '../proxy/stream-slots.js';
import { type Clock, systemClock } from '../util/clock.js';
import { openState } from '../state/open-state.js';
import { SessionAffinity } from '../state/session-affinity.js';
import { SpaceWidths } from '../state/space-widths.js';
import { settleWhenQuiet } from '../runtime/settle-when-quiet.js';
import type { StateBackend } from '../state/types.js';
import type { Env } from '../config/env.js';
import { TraceLink } from './trace-link.js';
import { assertSafeHost, checkInterval, LISTEN_BACKLOG } from './listening.js';

export interface ProxyOptions {
  config: Config;
  /** Overrides config.server.host / port (the CLI's --host / --port). */
  host?: string;
  port?: number;
  /** Where the JSON-lines log goes; none when omitted. */
  log?: Writable;
  /** The bus to publish on (the live UI subscribes to it); a new one when omitted. */
  telemetry?: TelemetryBus;
  /** The weight draw's dice (tests pass a seeded one). */
  random?: () => number;
  /** Re-read the tier file when it changes (serve). */
  watch?: boolean;
  /** How a reload reads the tier file (default: loadConfig); the demo's keeps its mocks' URLs and temporary usage log. */
  readConfig?: (file: string) => Config;
  /** Run active health checks and warm-ups once listening; off for embedded and test servers (serve starts them itself, after `start:`). */
  activeChecks?: boolean;
  /** Time for circuits, cold starts, weight TTLs and rollbacks (tests pass one they move on). */
  clock?: Clock;
  /** The usage log's timings (tests). */
  usage?: UsageLogOptions;
  /** Where the OTEL_* variables are read (default: the process's environment). */
  env?: Env;
}

/** The proxy's lifecycle: listen, apply reloads, drain on close. */
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
    const telemetry = options.telemetry ?? new TelemetryBus();
    if (options.log) attachRequestLog(telemetry, options.log);
    const clock = options.clock ?? systemClock;
    const now = (): number => clock.now();
    const health = new HealthBoard(telemetry, config, now);
    const weights = new WeightControl(telemetry, config, clock);
    this.checker = new HealthChecker(telemetry, config, refreshFit, now);
    const metrics = new Metrics(telemetry, config);
    this.usage = new UsageLog(telemetry, config, { registry: metrics.registry, ...options.usage });
    this.state = openState({
      config,
      telemetry,
      registry: metrics.registry,
      weights,
      embeddedBudgets: this.usage.budgets,
      takeBudgetGauge: () => this.usage.takeBudgetGauge(),
    });
    this.app = {
      config,
      telemetry,
      pools: new ProviderPools(config),
      health,
      weights,
      gate: {
        weight: (tier) => weights.weight(tier),
        allows: (tier) => health.allows(tier),
        claim: (tier) => health.claim(tier),
        isCold: (tier) => health.isCold(tier),
      },
      metrics,
      state: this.state,
      random: options.random ?? Math.random,
      affinity: new SessionAffinity(now),
      spaces: new SpaceWidths(),
      snapshot: () => ({ config: this.app.config, pools: this.app.pools.acquire() }),
      inFlight: new Set(),
      handling: 0,
      lastArrival: Date.now(),
      streams: new StreamSlots(),
      draining: false,
      startedAt: Date.now(),
      reload: () => this.reload(),
      checkNow: () => this.checker.runAll(),
      sessions: new SessionBoard(telemetry),
      // A status line asks on every update of its agent's screen: the usage log is queried at most every 2 s.
      usageToday: atMostEvery(2_000, () => this.usage.dayTotals().catch(() => null)),
    };
    preloadSavers(config);
    this.traces = new TraceLink(telemetry, metrics.registry, options.env ?? process.env);
    this.traces.apply(config);
    this.rollbacks = new RollbackWatcher(telemetry, weights, config, now);
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

/**
 * For a config whose routes have savers: loads them, and the encodings they measure with (~200 ms
 * each), so that the first request on such a route waits for neither. Without savers, nothing:
 * `serve` starts without their modules.
 */
function preloadSavers(config: Config): void {
  if (![...config.routes.values()].some((route) => route.savers.length > 0)) return;
  void import('../savers/route-savers.js').then(({ preloadSaverTokenizers }) => preloadSaverTokenizers(config)).catch(() => undefined);
}
