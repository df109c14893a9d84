import type { Dispatcher } from 'undici';
import type { Provider, Route, Tier } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';
import { type ShapedAnswer, UpstreamCall } from '../protocols/call.js';
import { type ClientCodec, type ClientRequest, isUnsupported } from '../protocols/types.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { type AttemptOutcome, type AttemptRecord, type Blame, isLimitSkip } from '../telemetry/events.js';
import { type AttemptError, timeoutError } from './attempt-error.js';
import { retryDelayMs } from './backoff.js';
import { sleep } from '../util/sleep.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { StreamSink } from './client-writer.js';
import { planTiers } from './plan.js';
import { Recovery } from './resume/recovery.js';
import { ResumeState } from './resume/resume-state.js';
import { fitCall } from '../fit/fit-call.js';
import { tierFit } from '../fit/tier-facts.js';
import { PromptCount } from '../fit/prompt-count.js';
import { type PayloadFailure, payloadFailure } from '../fit/payload-failure.js';
import { StreamAttempt } from './stream-attempt.js';
import type { RequestAdmission } from './tier-admission.js';
import { type UnaryAnswer, UnaryAttempt } from './unary-attempt.js';

export interface RoutingDeps {
  pools: { get(provider: Provider): Dispatcher };
  gate: TierGate;
  telemetry: TelemetryBus;
  random: () => number;
  /** Limits and budgets of the route's tiers; absent when none of them has any. */
  admission?: RequestAdmission | null;
}

export interface RoutingRequest {
  id: string;
  route: Route;
  request: ClientRequest;
  codec: ClientCodec;
  /** The commit step of a stream (synchronous): answers the client; `attempts` tries it took. */
  commit: (tier: Tier, attempts: number) => StreamSink;
  /** performance.now() at the request's arrival: TTFT and the route deadline count from here. */
  arrivedAt: number;
  client: ClientLifetime;
  /** A tier failed and the next one is tried (an idempotent request's record says so). */
  onFallback?: () => void;
  /** The prompt's token count for the fit check, made only if needed; the caller compares it with the usage after. */
  prompt?: PromptCount;
}

/** The soonest a tier skipped for llm-route's own limit or budget takes requests again. */
export interface Limited {
  outcome: 'budget' | 'rate_limited';
  retryAfterMs: number;
}

export type RoutingOutcome =
  | { kind: 'stream'; tier: Tier; call: UpstreamCall; attempt: StreamAttempt; attempts: AttemptRecord[]; recovery: Recovery | null }
  | { kind: 'unary'; tier: Tier; call: UpstreamCall; answer: UnaryAnswer; attempts: AttemptRecord[] }
  /** The payload's fault: the upstream's own error goes to the client. */
  | { kind: 'rejected'; tier: Tier; answer: ShapedAnswer; error: AttemptError; attempts: AttemptRecord[] }
  /** No tier answered. `timedOut`: every attempt timed out, or the deadline passed (504). */
  | { kind: 'exhausted'; timedOut: boolean; planned: number; attempts: AttemptRecord[]; limited: Limited | null }
  /** No planned tier can carry this request (an image URL for Ollama, n > 1 for Anthropic, …). */
  | { kind: 'unsupported'; reasons: string[]; attempts: AttemptRecord[] }
  /** No tier answered, each for the payload's sake, at least one because it is too long (SPEC "Route by fit"): a 400. */
  | { kind: 'too_long'; failure: PayloadFailure; attempts: AttemptRecord[] }
  /** The client left, or the server is stopping. */
  | { kind: 'aborted'; attempts: AttemptRecord[] };

/**
 * The routing loop: tiers in plan order, same-tier retries with backoff, failover on the
 * tier's faults. It returns at the first commit; after that nothing here runs again.
 */
export async function routeRequest(req: RoutingRequest, deps: RoutingDeps): Promise<RoutingOutcome> {
  const { tiers: plan, allDown } = planTiers(req.route, deps.gate, deps.random);
  const attempts: AttemptRecord[] = [];
  const unsupported: string[] = [];
  const deadlineAt = req.arrivedAt + req.route.deadline_ms;
  const stream = req.request.stream;
  const admission = deps.admission;
  let allTimedOut = true;
  let limited: Limited | null = null;
  const prompt = req.prompt ?? new PromptCount(req.request);
  const tooLong: Array<{ prompt?: number; limit?: number }> = [];

  for (let t = 0; t < plan.length; t++) {
    const tier = plan[t];
    const prepared = UpstreamCall.prepare(tier, req.codec, req.request);
    if (isUnsupported(prepared)) {
      unsupported.push(`${tier.name}: ${prepared.unsupported}`);
      record(req, deps, attempts, tier, 1, 'unsupported', 0, undefined, null, prepared.unsupported);
      continue;
    }
    let call: UpstreamCall = prepared;
    if (req.request.operation !== 'count_tokens') {
      const checked = fitCall(tier, req.codec, req.request, call, prompt);
      const fitted = checked instanceof Promise ? await checked : checked;
      if (!fitted.fits) {
        // Nothing is sent to a tier that cannot hold the request: no health penalty either.
        if (fitted.outcome === 'unsupported') unsupported.push(`${tier.name}: ${fitted.message}`);
        else tooLong.push({ prompt: fitted.prompt, limit: fitted.limit });
        record(req, deps, attempts, tier, 1, fitted.outcome, 0, undefined, null, fitted.message);
        continue;
      }
      call = fitted.call;
    }
    if (admission) {
      const entry = await admission.enter(tier, req.client, stream ? deadlineAt - performance.now() : Infinity);
      if (!entry.ok) {
        if (entry.outcome === 'aborted') return aborted(req, attempts);
        // Skipped by llm-route's own limit or budget: no request was sent, the tier's health is not concerned.
        record(req, deps, attempts, tier, 1, entry.outcome, entry.waitedMs, undefined, null, entry.message);
        if (!limited || entry.retryAfterMs < limited.retryAfterMs) limited = { outcome: entry.outcome, retryAfterMs: entry.retryAfterMs };
        continue;
      }
    }
    // Another request took this tier's half-open trial since planning: leave the trial to it.
    if (!allDown && !deps.gate.claim(tier)) {
      admission?.leave(tier);
      continue;
    }
    let lastError: AttemptError | null = null;
    /** One more try without what the tier refused and the client did not aim at it (call.retryWithout). */
    let resent = 0;
    let droppedSaid: UpstreamCall | null = null;

    for (let n = 1; n <= tier.retry.attempts + resent; n++) {
      if (req.client.aborted) return aborted(req, attempts);
      if (n > 1 && admission && !(await admission.retry(tier, req.client, stream ? deadlineAt - performance.now() : Infinity))) {
        if (req.client.aborted) return aborted(req, attempts);
        record(req, deps, attempts, tier, n, 'rate_limited', 0, undefined, null, `provider ${tier.provider.name} at its rpm limit: no retry`);
        break;
      }
      if (call.request.dropped && call !== droppedSaid) {
        deps.telemetry.emit({ type: 'control_dropped', route: req.route.name, tier: tier.name, message: call.request.dropped });
        droppedSaid = call;
      }
      const input = { tier, call, pool: deps.pools.get(tier.provider), client: req.client };
      let error: AttemptError;
      let elapsedMs: number;
      if (stream) {
        const remaining = deadlineAt - performance.now();
        if (remaining <= 0) {
          attempts.push({ tier: tier.name, attempt: n, outcome: 'deadline', ms: 0, message: timeoutError('deadline', req.route.deadline_ms, 'first_token').message });
          return { kind: 'exhausted', timedOut: true, planned: plan.length, attempts, limited };
        }
        // The first request after the tier was idle may have to wait for a model load.
        const ttftMs = deps.gate.isCold(tier) ? tier.timeouts.cold_ttft_ms : tier.timeouts.ttft_ms;
        const budget = Math.min(ttftMs, Math.ceil(remaining));
        // Only a resume route keeps what the client has (src/proxy/resume/resume-state.ts); others pay nothing.
        const resume = req.route.on_break === 'resume' && req.route.resume_max > 0 ? new ResumeState(call, req.codec, req.request) : null;
        const attempt = new StreamAttempt({
          ...input,
          keepOpen: resume?.keepOpen,
          ttftBudgetMs: budget,
          ttftLimit: budget < ttftMs ? 'deadline' : 'ttft_timeout',
          output: resume ? resume.output : call.streamOutput(),
          onChunkError: () => deps.telemetry.emit({ type: 'chunk_error', route: req.route.name, tier: tier.name }),
          // The client is answered first; the bookkeeping of this attempt follows.
          commit: (committed) => {
            const sink = req.commit(tier, attempts.length + 1);
            record(req, deps, attempts, tier, n, 'ok', committed.elapsedMs, undefined, null);
            return sink;
          },
        });
        const result = await attempt.committed;
        elapsedMs = attempt.elapsedMs;
        if (result.committed) {
          const recovery = resume && new Recovery({ req, deps, state: resume, plan, at: t, deadlineAt, attempts });
          return { kind: 'stream', tier, call, attempt, attempts, recovery };
        }
        error = result.error;
      } else {
        const attempt = new UnaryAttempt(input);
        const result = await attempt.result;
        elapsedMs = attempt.elapsedMs;
        if (result.ok) {
          record(req, deps, attempts, tier, n, 'ok', elapsedMs, result.answer.answer.status, null);
          return { kind: 'unary', tier, call, answer: result.answer, attempts };
        }
        error = result.error;
      }

      if (error.reason === 'client_abort' || error.reason === 'shutdown') return aborted(req, attempts);
      record(req, deps, attempts, tier, n, error.reason, elapsedMs, error.status, error.blame, error.message);
      const again = resent === 0 ? call.retryWithout(error.status, error.message) : null;
      if (again) {
        call = again;
        resent = 1;
        continue;
      }
      if (!error.failover) {
        admission?.leave(tier);
        const answer = call.rejection(error.upstream ?? { status: 400, headers: {}, body: Buffer.alloc(0) }, redactSecrets(error.message, tier.provider));
        return { kind: 'rejected', tier, answer, error, attempts };
      }
      lastError = error;
      if (error.reason === 'context_length') tooLong.push(payloadFailure.numbersOf(error, tierFit(tier).context));
      if (!error.timedOut) allTimedOut = false;
      if (error.reason === 'deadline') return { kind: 'exhausted', timedOut: true, planned: plan.length, attempts, limited };
      // A tier that timed out is not retried: the next tier is tried.
      if (error.timedOut || !error.retryable || n === tier.retry.attempts + resent) break;
      // This failure may have opened the circuit (or failed its half-open trial): no retry then.
      if (!allDown && !deps.gate.admit(tier)) break;
      const delay = retryDelayMs(tier.retry, n, error.retryAfterMs, deps.random);
      if (delay === null) break; // Retry-After longer than the retry budget: fail over now
      if (stream && performance.now() + delay >= deadlineAt) break;
      if (!(await sleep(delay, req.client))) return aborted(req, attempts);
    }

    admission?.leave(tier);
    if (lastError && t < plan.length - 1) {
      // The failed attempt was cancelled as it failed: undici's abort destroys its socket at once
      // (a request still waiting for a connection is aborted before a byte of it is written), so
      // the next tier never runs while this one still can: an idempotent request executes once.
      deps.telemetry.emit({ type: 'failover', id: req.id, route: req.route.name, fromTier: tier.name, reason: lastError.reason });
      req.onFallback?.();
    }
  }
  if (unsupported.length > 0 && unsupported.length === attempts.length) return { kind: 'unsupported', reasons: unsupported, attempts };
  const failure = await payloadFailure.of(attempts, tooLong, prompt);
  if (failure) return { kind: 'too_long', failure, attempts };
  const tried = attempts.filter((a) => a.outcome !== 'unsupported' && !isLimitSkip(a));
  return { kind: 'exhausted', timedOut: tried.length > 0 && allTimedOut, planned: plan.length, attempts, limited };
}

function aborted(req: RoutingRequest, attempts: AttemptRecord[]): RoutingOutcome {
  return { kind: 'aborted', attempts };
}

export function record(
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
