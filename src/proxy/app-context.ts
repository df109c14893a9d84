import type { Config } from '../config/schema.js';
import type { HealthBoard } from '../health/health-board.js';
import type { ProviderPools } from '../providers/pools.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Metrics } from '../telemetry/metrics.js';

/** What a request handler needs from the running server. */
export interface AppContext {
  config: Config;
  pools: ProviderPools;
  health: HealthBoard;
  telemetry: TelemetryBus;
  metrics: Metrics;
  random: () => number;
  /** One abort per request in flight: shutdown aborts the ones still open after the grace period. */
  inFlight: Set<AbortController>;
  /** Set when shutdown begins: answers then carry `connection: close`. */
  draining: boolean;
  startedAt: number;
}
