import type {
  AttemptFinished,
  CaughtByCatchAll,
  ChunkDropped,
  FailedOver,
  ModelLoaded,
  RequestFinished,
  RequestStarted,
  StreamCommitted,
  ToolTextHeld,
} from './request-events.js';
import type {
  ConfigReloaded,
  ProviderOutput,
  StateDegraded,
  StateRecovered,
  TraceExportFailing,
  TraceExportRecovered,
  UsageDegraded,
  UsageRecovered,
} from './system-events.js';
import type {
  ControlDropped,
  FitDiscovered,
  HealthChecked,
  PromptTruncated,
  RolledBack,
  TierStateChanged,
  TierUnavailable,
  WeightChanged,
} from './tier-events.js';

/**
 * Everything the UI, metrics, health and the request log learn about requests leaves the
 * request path as one of these events. Nothing on the path calls into a subscriber directly.
 * The events live by family (request, tier, system); this module is the one place to import them from.
 */
export type * from './request-events.js';
export type * from './tier-events.js';
export type * from './system-events.js';
export type { AttemptOutcome, AttemptReason, ClientProtocol, RequestOutcome } from '../protocols/core/names.js';
export { isHealthNeutral, isLimitSkip, provesTierAlive } from './attempt-verdicts.js';

export type TelemetryEvent =
  | RequestStarted
  | AttemptFinished
  | FailedOver
  | StreamCommitted
  | ChunkDropped
  | ToolTextHeld
  | RequestFinished
  | TierStateChanged
  | WeightChanged
  | RolledBack
  | ConfigReloaded
  | HealthChecked
  | ProviderOutput
  | UsageDegraded
  | UsageRecovered
  | StateDegraded
  | StateRecovered
  | FitDiscovered
  | ControlDropped
  | CaughtByCatchAll
  | ModelLoaded
  | PromptTruncated
  | TierUnavailable
  | TraceExportFailing
  | TraceExportRecovered;
