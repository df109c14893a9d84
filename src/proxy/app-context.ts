import type { Config } from '../config/schema.js';
import type { ClientLifetime } from './client-lifetime.js';
import type { WeightControl } from '../control/weights.js';
import type { HealthBoard } from '../health/health-board.js';
import type { TierGate } from '../health/health-view.js';
import type { ProviderPools } from '../providers/pools.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { BudgetLedger } from '../usage/budgets/ledger.js';

export type ReloadResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** What a request handler needs from the running server. */
export interface AppContext {
  /** The config new requests use; replaced whole by a reload (requests in flight keep theirs). */
  config: Config;
  pools: ProviderPools;
  health: HealthBoard;
  weights: WeightControl;
  /** The planner's view of health and weights. */
  gate: TierGate;
  telemetry: TelemetryBus;
  metrics: Metrics;
  /** Budgets: reserve at admission, settle (or release) when the request ends (see usage/budgets/ledger.ts). */
  budgets: BudgetLedger;
  random: () => number;
  /** One abort per request in flight: shutdown aborts the ones still open after the grace period. */
  inFlight: Set<ClientLifetime>;
  /** Set when shutdown begins: answers then carry `connection: close`. */
  draining: boolean;
  startedAt: number;
  /** Re-reads the tier file; a valid one applies to new requests, an invalid one changes nothing. */
  reload(): ReloadResult;
  /** Runs the active health checks of every tier now (the UI's `p`, and admin). */
  checkNow(): Promise<void>;
}
