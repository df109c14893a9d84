import type { Dispatcher } from 'undici';
import type { Provider, Route, Tier } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';
import type { ClientCodec, ClientRequest } from '../protocols/core/types.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { AttemptOutcome, AttemptRecord, Blame } from '../telemetry/events.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';
import type { CommitPort } from './stream-sink.js';
import type { RequestAdmission } from './tier-admission.js';

/** What the routing loop uses of the running server, taken from the request's snapshot. */
export interface RoutingDeps {
  pools: { get(provider: Provider): Dispatcher };
  gate: TierGate;
  telemetry: TelemetryBus;
  random: () => number;
  /** Limits and budgets of the route's tiers; absent when none of them has any. */
  admission?: RequestAdmission | null;
}

/** One request as the routing loop sees it. */
export interface RoutingRequest {
  id: string;
  route: Route;
  request: ClientRequest;
  codec: ClientCodec;
  /** Where a stream's first content goes (the exchange): answers the client, returns the sink. */
  port: CommitPort;
  /** performance.now() at the request's arrival: TTFT and the route deadline count from here. */
  arrivedAt: number;
  client: ClientLifetime;
  /** A tier failed and the next one is tried (an idempotent request's record says so). */
  onFallback?: () => void;
  /** The prompt's token count for the fit check, made only if needed; the caller compares it with the usage after. */
  prompt?: PromptCount;
}

/** Records one attempt's outcome in the request's list and as an `attempt_end` event. */
export function recordAttempt(
  req: RoutingRequest, deps: RoutingDeps, attempts: AttemptRecord[], tier: Tier, n: number,
  outcome: AttemptOutcome, ms: number, status: number | undefined, blame: Blame, message?: string,
): void {
  const entry: AttemptRecord = { tier: tier.name, attempt: n, outcome, ms: Math.round(ms) };
  if (status !== undefined) entry.status = status;
  // Upstream messages can echo the key ("Incorrect API key provided: sk-…"); this record reaches clients and logs.
  if (message !== undefined) entry.message = redactSecrets(message, tier.provider);
  attempts.push(entry);
  deps.telemetry.emit({ type: 'attempt_end', id: req.id, route: req.route.name, tier: tier.name, provider: tier.provider.name, record: entry, stream: req.request.stream, blame });
}
