import type { Config } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';
import type { ProviderPools } from '../providers/pools.js';
import type { StateBackend } from '../state/types.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { StreamSlots } from './stream-slots.js';

/** What the request path needs from the running server (the server's app context provides it). */
export interface ProxyContext {
  /** The config and pools for a request arriving now, taken together (the pools are acquired: release them). */
  snapshot(): { config: Config; pools: ProviderPools };
  /** The planner's view of health and weights. */
  gate: TierGate;
  telemetry: TelemetryBus;
  random: () => number;
  /** Limits, budgets and idempotency records: embedded, or shared with other instances on Redis. */
  state: StateBackend;
  /** One lifetime per request in flight: shutdown aborts the ones still open after the grace period. */
  inFlight: Set<ClientLifetime>;
  /** Streaming requests open now, held to server.max_streams. */
  streams: StreamSlots;
}
