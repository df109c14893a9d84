import type { Writable } from 'node:stream';
import type { Config } from '../config/schema.js';
import { RollbackWatcher } from '../control/rollback-watcher.js';
import { WeightControl } from '../control/weights.js';
import { atMostEvery } from '../util/at-most-every.js';
import { HealthBoard } from '../health/health-board.js';
import { refreshFit } from '../fit/refresh-fit.js';
import { HealthChecker } from '../health/health-checker.js';
import { ProviderPools } from '../providers/pools.js';
import { TelemetryBus } from '../telemetry/bus.js';
import { Metrics } from '../telemetry/metrics.js';
import { attachRequestLog } from '../telemetry/request-log.js';
import { UsageLog, type UsageLogOptions } from '../usage/usage-log.js';
// After the usage log, which prices rows too: imported before it, the pricing modules became a bundle file of their own (one more for serve to load).
import { SessionBoard } from '../control/session-board.js';
import type { AppContext, ReloadResult } from '../control/app-context.js';
import { StreamSlots } from '../proxy/stream-slots.js';
import { type Clock, systemClock } from '../util/clock.js';
import { openState } from '../state/open-state.js';
import { SessionAffinity } from '../state/session-affinity.js';
import { SpaceWidths } from '../state/space-widths.js';
import type { StateBackend } from '../state/types.js';
import type { Env } from '../config/env.js';
import { TraceLink } from './trace-link.js';

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

/** The layers the proxy runs on, joined: the app context its requests see, and the parts its lifecycle drives. */
export interface WiredApp {
  app: AppContext;
  usage: UsageLog;
  state: StateBackend;
  checker: HealthChecker;
  rollbacks: RollbackWatcher;
  traces: TraceLink;
}

/**
 * Builds the proxy's parts from the first config, each on the one telemetry bus: health, weights,
 * metrics, the usage log, the shared state, traces and rollbacks, and the app context that hands
 * them to the request path. `reload` is the server's (the admin API and the watcher ask it).
 */
export function wireApp(options: ProxyOptions, reload: () => ReloadResult): WiredApp {
  const { config } = options;
  const telemetry = options.telemetry ?? new TelemetryBus();
  if (options.log) attachRequestLog(telemetry, options.log);
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now();
  const health = new HealthBoard(telemetry, config, now);
  const weights = new WeightControl(telemetry, config, clock);
  const checker = new HealthChecker(telemetry, config, refreshFit, now);
  const metrics = new Metrics(telemetry, config);
  const usage = new UsageLog(telemetry, config, { registry: metrics.registry, ...options.usage });
  const state = openState({
    config,
    telemetry,
    registry: metrics.registry,
    weights,
    embeddedBudgets: usage.budgets,
    takeBudgetGauge: () => usage.takeBudgetGauge(),
  });
  const app: AppContext = {
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
    state,
    random: options.random ?? Math.random,
    affinity: new SessionAffinity(now),
    spaces: new SpaceWidths(),
    snapshot: () => ({ config: app.config, pools: app.pools.acquire() }),
    inFlight: new Set(),
    handling: 0,
    lastArrival: Date.now(),
    streams: new StreamSlots(),
    draining: false,
    startedAt: Date.now(),
    reload,
    checkNow: () => checker.runAll(),
    sessions: new SessionBoard(telemetry),
    // A status line asks on every update of its agent's screen: the usage log is queried at most every 2 s.
    usageToday: atMostEvery(2_000, () => usage.dayTotals().catch(() => null)),
  };
  preloadSavers(config);
  const traces = new TraceLink(telemetry, metrics.registry, options.env ?? process.env);
  traces.apply(config);
  const rollbacks = new RollbackWatcher(telemetry, weights, config, now);
  return { app, usage, state, checker, rollbacks, traces };
}

/**
 * For a config whose routes have savers: loads them, and the encodings they measure with (~200 ms
 * each), so that the first request on such a route waits for neither. Without savers, nothing:
 * `serve` starts without their modules.
 */
export function preloadSavers(config: Config): void {
  if (![...config.routes.values()].some((route) => route.savers.length > 0)) return;
  void import('../savers/route-savers.js').then(({ preloadSaverTokenizers }) => preloadSaverTokenizers(config)).catch(() => undefined);
}
