import type { Usage } from '../protocols/usage.js';

/** The protocol a client spoke to llm-route: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages. */
export type ClientProtocol = 'chat' | 'responses' | 'messages';

/** What one token saver did to a request, measured with the tokenizer on the message contents. */
export interface SaverMeasure {
  saver: string;
  /** Tokens before and after this saver ran (equal when it saved nothing, failed, or was not applied). */
  before: number;
  after: number;
  /** The saver threw or overran its time budget: it was skipped for this request. */
  failed?: boolean;
}

/**
 * Everything the UI, metrics, health and the request log learn about requests leaves the
 * request path as one of these events. Nothing on the path calls into a subscriber directly.
 */

/**
 * Why one upstream attempt gave no answer (`AttemptError.reason`): the name the request log,
 * the usage database, the metrics and a 502's `attempts` list give it.
 */
export type AttemptReason =
  // the connection
  | 'connection_refused' | 'connect_timeout' | 'unreachable' | 'connection_reset' | 'transport_error'
  // the clock
  | 'ttft_timeout' | 'total_timeout' | 'idle_timeout' | 'deadline'
  // a non-2xx answer, as the wire codec classified it
  | 'rate_limited' | 'server_error' | 'timeout_or_conflict' | 'auth' | 'model_not_found' | 'client_error'
  | 'context_length' | 'content_policy' | 'bad_request'
  // a 2xx answer that is not one
  | 'bad_response' | 'empty_stream' | 'upstream_error' | 'broken_stream' | 'answer_too_large'
  // a mid-stream recovery whose replay is not the answer the client has
  | 'replay_diverged'
  // not the tier's doing: a request it cannot carry, the client leaving, the server stopping
  | 'unsupported' | 'client_abort' | 'shutdown';

/** How one attempt ended: `ok`, a reason it failed, or `budget` (the tier was skipped: its budget was spent). */
export type AttemptOutcome = 'ok' | AttemptReason | 'budget' | 'too_long';

/** One upstream try, as the request log and the 502 body list it. */
export interface AttemptRecord {
  tier: string;
  attempt: number;
  outcome: AttemptOutcome;
  status?: number;
  ms: number;
  message?: string;
}

export type RequestOutcome =
  | 'ok' // answered (stream finished cleanly, or a whole response)
  | 'interrupted' // committed stream ended by an upstream stall or break
  | 'upstream_rejected' // the payload's fault; the upstream's error was passed on
  | 'failed' // every tier failed
  | 'timeout' // every tier timed out, or the route's deadline passed
  | 'client_abort' // the client went away first
  | 'overloaded' // refused for load: server.max_streams streams were open
  | 'bad_request' // rejected by llm-route before routing
  | 'replayed'; // the answer stored under its Idempotency-Key (no tier was asked)

export interface RequestStarted {
  type: 'request_start';
  id: string;
  route: string;
  stream: boolean;
  protocol: ClientProtocol;
}

/**
 * Whose fault a failed attempt was: `provider` (socket-level: counts against every tier of the
 * provider), `tier` (model-level: 404, context length, TTFT), `payload` (the request's own
 * fault; says nothing about health); null when nobody is at fault: success, the route's
 * deadline cutting the attempt short, or an input the tier cannot take.
 */
export type Blame = 'provider' | 'tier' | 'payload' | null;

export interface AttemptFinished {
  type: 'attempt_end';
  id: string;
  route: string;
  tier: string;
  provider: string;
  record: AttemptRecord;
  /** A streaming attempt: for `ok`, record.ms is the tier's own time to first token. */
  stream: boolean;
  blame: Blame;
}

export interface FailedOver {
  type: 'failover';
  id: string;
  route: string;
  fromTier: string;
  reason: AttemptReason;
}

export interface StreamCommitted {
  type: 'commit';
  id: string;
  route: string;
  tier: string;
  ttftMs: number;
}

export interface ChunkDropped {
  type: 'chunk_error';
  route: string;
  tier: string;
}

export interface RequestFinished {
  type: 'request_end';
  id: string;
  route: string;
  /** The tier that answered; null when none did. */
  tier: string | null;
  status: number;
  outcome: RequestOutcome;
  stream: boolean;
  /** True when a stream was committed (it was counted as active). */
  committed: boolean;
  attempts: AttemptRecord[];
  ttftMs?: number;
  durationMs: number;
  /** Epoch ms at the request's arrival. */
  startedAt: number;
  /** The protocol the client spoke (the route may be empty for requests rejected before routing). */
  protocol: ClientProtocol;
  /** The answering tier's provider and model; null when no tier answered. */
  provider: string | null;
  model: string | null;
  /** As the upstream reported it; absent when it reported none. */
  usage?: Usage;
  /**
   * Present only when a tier answered but reported no usage: the text to count with a
   * tokenizer off the request path (the prompt's message contents and the answer's text).
   */
  estimate?: { promptText: string; completionText: string };
  /** Token savers that ran on the request, in order. */
  savers?: SaverMeasure[];
  chunkErrors: number;
  error?: string;
  /** A committed stream that broke and was recovered (or tried to be) on a resume route. */
  resumed?: ResumedStream;
  /** The tier read fewer than 70% of the prompt tokens counted before sending: it cut the prompt silently (SPEC "Route by fit"). */
  promptTruncated?: { sent: number; read: number };
}

/** A mid-stream recovery: from which tier to which, by which means, after how much text, and how it went. */
export interface ResumedStream {
  from: string;
  to: string;
  how: 'replay' | 'continue';
  at_chars: number;
  result: 'ok' | 'diverged' | 'failed';
}

/** A tier's health state changed (healthy, degraded, down). */
export interface TierStateChanged {
  type: 'tier_state';
  route: string;
  tier: string;
  from: 'healthy' | 'degraded' | 'down';
  to: 'healthy' | 'degraded' | 'down';
  reason: string;
  /** While down: when the next half-open trial may run (epoch ms). */
  retryAt?: number;
}

/** A tier's effective weight changed: admin override, kill switch, alert, rollback, TTL expiry, reload. */
export interface WeightChanged {
  type: 'weight';
  route: string;
  tier: string;
  weight: number;
  configured: number;
  source: 'admin' | 'alert' | 'rollback' | 'expired' | 'cleared' | 'reload';
  reason?: string;
  /** An admin override with a TTL: when it lapses (epoch ms). */
  expiresAt?: number;
  /** Everything that holds the weight after this change; `reason` is only words for people. */
  layers: WeightLayers;
}

/**
 * What stands between a tier's configured weight and the one in force: a firing alert or a
 * rollback forces 0; else an admin override (0 is the kill switch) sets it.
 */
export interface WeightLayers {
  /** The admin override, its own weight, and when it lapses (epoch ms; null: no TTL). */
  admin: { weight: number; expiresAt: number | null } | null;
  /** The names of the firing alerts that name this tier. */
  alerts: string[];
  /** Why the tier is rolled back; null when it is not. */
  rollback: string | null;
}

/** Automated rollback tripped: the numbers that did it. */
export interface RolledBack {
  type: 'rollback';
  route: string;
  tier: string;
  reason: 'ttft_p99' | 'error_rate';
  observed: number;
  threshold: number;
  requests: number;
  windowS: number;
}

/** The tier file was reloaded (ok), or a change was rejected (problems as file:line:col lines). */
export interface ConfigReloaded {
  type: 'reload';
  ok: boolean;
  file: string;
  problems?: string[];
  routes?: number;
}

/** An active health check, warm-up or probe (asked for now: the UI's `p`, the admin API) of one tier finished. */
export interface HealthChecked {
  type: 'health_check';
  route: string;
  tier: string;
  kind: 'check' | 'warmup' | 'probe';
  ok: boolean;
  reachable: boolean;
  modelPresent: boolean | null;
  ttftMs: number | null;
  error?: string;
  /** The server answered 503 while loading its model: neither a failure nor a success. */
  loading?: boolean;
  /** A warm-up that found the server loading and waited for it: how long, so far or in all. */
  waitedMs?: number;
  /** Worth knowing though ok (a server that serves any model name). */
  note?: string;
}

/** What discovery learned of a tier's limits, when it changed (SPEC "Route by fit"); `error`: unknown, and why. */
export interface FitDiscovered {
  type: 'fit_discovered';
  route: string;
  tier: string;
  context: number | null;
  context_source: string | null;
  vision: boolean | null;
  tools: boolean | null;
  error?: string;
}

/** A control the client sent that a tier got without (a reasoning effort it has no room or equivalent for). */
export interface ControlDropped {
  type: 'control_dropped';
  route: string;
  tier: string;
  message: string;
}

/** Output of a local provider started by llm-route (`start:`), line by line. */
export interface ProviderOutput {
  type: 'provider_output';
  provider: string;
  stream: 'stdout' | 'stderr' | 'status';
  line: string;
}

/**
 * The usage database cannot be used (locked, corrupt, full, unwritable): said once per episode.
 * The proxy keeps serving; rows are dropped (and counted) until the database reopens.
 */
export interface UsageDegraded {
  type: 'usage_degraded';
  path: string;
  error: string;
}

/** The usage database is usable again; `dropped` rows were lost meanwhile. */
export interface UsageRecovered {
  type: 'usage_recovered';
  path: string;
  dropped: number;
}

/**
 * The shared state (Redis) cannot be reached: said once per episode. The instance keeps
 * serving on local state: limits and budgets on its own counters, keys deduplicated here only.
 */
export interface StateDegraded {
  type: 'state_degraded';
  backend: 'redis';
  /** host:port/db, never a password. */
  target: string;
  error: string;
}

/** The shared state is reachable again; this instance has rejoined it. */
export interface StateRecovered {
  type: 'state_recovered';
  backend: 'redis';
  target: string;
  /** How long this instance served on local state. */
  downMs: number;
}

export type TelemetryEvent =
  | RequestStarted | AttemptFinished | FailedOver | StreamCommitted | ChunkDropped | RequestFinished
  | TierStateChanged | WeightChanged | RolledBack | ConfigReloaded | HealthChecked | ProviderOutput
  | UsageDegraded | UsageRecovered | StateDegraded | StateRecovered | FitDiscovered | ControlDropped;

/**
 * Outcomes of a tier that answered properly but cannot serve this payload: input it cannot
 * take (an image without a vision projector), a prompt longer than its context. Another tier
 * may serve it; this one is as healthy as before.
 */
const PAYLOAD_SPECIFIC_OUTCOMES: ReadonlySet<AttemptOutcome> = new Set<AttemptOutcome>(['unsupported', 'context_length']);

/** An attempt whose outcome tells nothing about the tier's health: the payload's fault, one it cannot carry, or the deadline's. */
export function isHealthNeutral(event: AttemptFinished): boolean {
  // too_long: the fit check skipped the tier before sending anything (it proves nothing alive either).
  return event.blame === 'payload' || PAYLOAD_SPECIFIC_OUTCOMES.has(event.record.outcome) || event.record.outcome === 'too_long' || (event.blame === null && event.record.outcome !== 'ok');
}

/**
 * llm-route's own limit or budget kept a request from the tier (outcome `budget` or
 * `rate_limited` without an HTTP status; an upstream's 429 has one): nothing was sent to it.
 */
export function isLimitSkip(record: AttemptRecord): boolean {
  return record.status === undefined && (record.outcome === 'budget' || record.outcome === 'rate_limited');
}

/** The tier answered: a success, the payload's fault, or a payload it cannot carry. It is alive, whatever the payload. */
export function provesTierAlive(event: AttemptFinished): boolean {
  return event.record.outcome === 'ok' || event.blame === 'payload' || PAYLOAD_SPECIFIC_OUTCOMES.has(event.record.outcome);
}
