import type { Config } from '../config/schema.js';
import type { HealthBoard } from '../health/health-board.js';
import type { TierGate } from '../health/health-view.js';
import type { ProviderPools } from '../providers/pools.js';
import type { SessionAffinity } from '../state/session-affinity.js';
import type { SpaceWidths } from '../state/space-widths.js';
import type { StateBackend } from '../state/types.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { DayTotals } from '../usage/store.js';
import type { SessionBoard } from './session-board.js';
import type { WeightControl } from './weights.js';

export type ReloadResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/**
 * The running server, as the request path, the control plane and the UI see it (built by
 * server/wire-app.ts). It lives here, below the proxy, so that the admin API can take it too;
 * a module that needs a few members takes a `Pick<AppContext, …>` of it. The request path
 * reads `config` and `pools` only through `snapshot()`, once per request (proxy/exchange.ts).
 */
export interface AppContext {
  /** The config new requests use; replaced whole by a reload (requests in flight keep theirs). */
  config: Config;
  pools: ProviderPools;
  /** The config and pools for a request arriving now, taken together (the pools are acquired: release them). */
  snapshot(): { config: Config; pools: ProviderPools };
  health: HealthBoard;
  weights: WeightControl;
  /** The planner's view of health and weights. */
  gate: TierGate;
  telemetry: TelemetryBus;
  metrics: Metrics;
  /** Limits, budgets, idempotency records and overrides: embedded, or shared with other instances on Redis. */
  state: StateBackend;
  /** The weight draw's dice. */
  random: () => number;
  /** The tier each session's last turn was answered by (per instance, in memory): weighted draws keep a session where its prompt is cached. */
  affinity: SessionAffinity;
  /** Each embeddings route's vector width, fixed by its first answer (per instance, in memory): an answer of another width is never delivered. */
  spaces: SpaceWidths;
  /** One lifetime per request in flight: shutdown aborts the ones still open after the grace period. */
  inFlight: Set<ClientLifetime>;
  /** Streaming requests open now, held to server.max_streams (proxy/stream-slots.ts). */
  streams: { readonly open: number; take(max: number): boolean; give(): void };
  /** Requests being handled, from their arrival (still uploading, or before routing) to their answer. */
  handling: number;
  /** When the latest request arrived (Date.now(); the start, before any): how serve and exec tell they have gone quiet. */
  lastArrival: number;
  /** Set when shutdown begins: answers then carry `connection: close`. */
  draining: boolean;
  startedAt: number;
  /** Re-reads the tier file; a valid one applies to new requests, an invalid one changes nothing. */
  reload(): ReloadResult;
  /** Runs the active health checks of every tier now (the UI's `p`, and admin). */
  checkNow(): Promise<void>;
  /** Each agent session's requests (Claude Code names its session), bounded: `GET /admin/sessions/<id>`. */
  sessions: SessionBoard;
  /** Today's (UTC) totals in the usage log, read at most every few seconds; null when there is none. */
  usageToday(): Promise<DayTotals | null>;
}
