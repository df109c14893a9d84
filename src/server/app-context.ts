import type { Config } from '../config/schema.js';
import type { ControlContext, ReloadResult } from '../control/control-context.js';
import type { WeightControl } from '../control/weights.js';
import type { HealthBoard } from '../health/health-board.js';
import type { TierGate } from '../health/health-view.js';
import type { ProviderPools } from '../providers/pools.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { ProxyContext } from '../proxy/proxy-context.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { BudgetLedger } from '../usage/budgets/ledger.js';

export type { ReloadResult };

/** The running server, as the request path, the control plane and the UI see it. */
export interface AppContext extends ProxyContext, ControlContext {
  /** The config new requests use; replaced whole by a reload (requests in flight keep theirs). */
  config: Config;
  pools: ProviderPools;
  health: HealthBoard;
  weights: WeightControl;
  gate: TierGate;
  telemetry: TelemetryBus;
  metrics: Metrics;
  /** Budgets: reserve at admission, settle (or release) when the request ends (see usage/budgets/ledger.ts). */
  budgets: BudgetLedger;
  random: () => number;
  inFlight: Set<ClientLifetime>;
  /** Requests being handled, from their arrival (still uploading, or before routing) to their answer. */
  handling: number;
  /** When the latest request arrived (Date.now(); the start, before any): how serve and exec tell they have gone quiet. */
  lastArrival: number;
  /** Set when shutdown begins: answers then carry `connection: close`. */
  draining: boolean;
  startedAt: number;
}
