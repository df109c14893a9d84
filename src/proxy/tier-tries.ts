import type { Tier } from '../config/schema.js';
import type { UpstreamCall } from '../protocols/call.js';
import { sleep } from '../util/sleep.js';
import type { AttemptError } from './attempt-error.js';
import { type Flight, reserveRetry, startStream } from './attempt-start.js';
import { retryDelayMs } from './backoff.js';
import { type FlightEnd, land } from './flight.js';
import type { Hedging } from './hedging/hedged-flight.js';
import { StreamResume } from './resume/stream-resume.js';
import type { RoutingOutcome } from './routing-outcome.js';
import type { UnaryResult } from './unary-attempt.js';
import { wholeAnswerAttempt } from './embedding-attempt.js';
import type { Walk } from './walk.js';

/** How a tier's tries ended: the request's outcome (an answer, or why it stops here), or on to the next tier. */
export type TierEnd = { outcome: RoutingOutcome } | { next: AttemptError | null };

/** One try's verdict: the request's outcome, or why the try failed. */
type Tried = { outcome: RoutingOutcome } | { error: AttemptError; elapsedMs: number };

/**
 * One tier's tries: the first, then same-tier retries on 429, 5xx and resets with exponential
 * backoff (Retry-After honoured when it fits the retry budget), never past the route's deadline;
 * one more try without a control the tier refused and the client did not aim at it. A payload
 * the tier rejects for its own sake ends the request with that rejection; a failure that is the
 * tier's leaves it for the next (`first`: a hedge handed to this tier, already in flight).
 */
export async function tryTier(walk: Walk, t: number, firstCall: UpstreamCall, first: Flight | null, hedging: Hedging | null): Promise<TierEnd> {
  const { req, app } = walk;
  const { log } = req;
  const tier = walk.plan[t];
  let call = firstCall;
  let lastError: AttemptError | null = null;
  /** One more try without what the tier refused and the client did not aim at it (call.retryWithout). */
  let resent = 0;
  let droppedSaid: UpstreamCall | null = null;

  for (let n = 1; n <= tier.retry.attempts + resent; n++) {
    if (req.client.aborted) return { outcome: { kind: 'aborted', attempts: log.records } };
    if (n > 1 && req.holds) {
      const again = await reserveRetry(walk, tier, n);
      if (again === 'aborted') return { outcome: { kind: 'aborted', attempts: log.records } };
      if (again === 'refused') break;
    }
    if (call.request.dropped && call !== droppedSaid) {
      app.telemetry.emit({ type: 'control_dropped', route: req.route.name, tier: tier.name, message: call.request.dropped });
      droppedSaid = call;
    }
    const tried = await tryOnce(walk, t, tier, call, n, n === 1 ? first : null, hedging);
    if ('outcome' in tried) return tried;
    const error = tried.error;
    log.failed(tier, n, error, tried.elapsedMs);
    // The tier was at work when the client left (or the server stopped): on record, as is a hedge still racing.
    if (error.reason === 'client_abort' || error.reason === 'shutdown') {
      await hedging?.abandon();
      return { outcome: { kind: 'aborted', attempts: log.records, tier } };
    }
    lastError = error;
    // It failed while its hedge ran: the hedge is the attempt in flight now, whatever this one's fault.
    if (hedging?.handing) {
      walk.notes.failed(tier, error);
      break;
    }
    const again = resent === 0 ? call.retryWithout(error.status, error.message) : null;
    if (again) {
      call = again;
      resent = 1;
      continue;
    }
    if (!error.failover) {
      log.left(tier);
      const answer = call.rejection(error.upstream ?? { status: 400, headers: {}, body: Buffer.alloc(0) }, call.redact(error.message));
      return { outcome: { kind: 'rejected', tier, answer, error, attempts: log.records } };
    }
    walk.notes.failed(tier, error);
    if (error.reason === 'deadline') return { outcome: walk.notes.timedOut(walk.plan.length, log.records) };
    const delay = retryDelay(walk, tier, error, n, n === tier.retry.attempts + resent);
    if (delay === null) break;
    if (!(await sleep(delay, req.client))) return { outcome: { kind: 'aborted', attempts: log.records } };
  }
  log.left(tier);
  return { next: lastError };
}

/** One try at the tier: a stream to its commit (raced by a hedge on a hedged route), or a whole answer. */
async function tryOnce(walk: Walk, t: number, tier: Tier, call: UpstreamCall, n: number, first: Flight | null, hedging: Hedging | null): Promise<Tried> {
  const { req } = walk;
  if (!req.request.stream) {
    const input = { tier, call, pool: req.pools.get(tier.provider), client: req.client, lastTier: walk.lastTierOf(t, call) };
    const attempt = wholeAnswerAttempt(req, walk.app.spaces, input);
    return unaryResult(walk, tier, call, n, attempt, await attempt.result);
  }
  const lastTier = walk.lastTierOf(t, call);
  const flight = first ?? startStream(walk, t, tier, call, n, hedging || lastTier ? { door: hedging?.door ?? null, lastTier } : undefined);
  if (!('attempt' in flight)) {
    req.log.deadlinePassed(tier, n, flight.message);
    return { outcome: walk.notes.timedOut(walk.plan.length, req.log.records) };
  }
  return streamResult(walk, hedging ? await hedging.fly(flight) : await land(flight), hedging);
}

/** A streaming try's verdict: committed (the stream is the answer; the client was answered at commit), or why not. */
function streamResult(walk: Walk, end: FlightEnd, hedging: Hedging | null): Tried {
  if (!end.committed) return { error: end.error, elapsedMs: end.elapsedMs };
  const { tier, call, resumeState, t, n } = end.flight;
  walk.req.log.ok(tier, n, end.result.elapsedMs);
  walk.answered(tier);
  const resume = resumeState && new StreamResume({ site: walk, state: resumeState, plan: walk.plan, at: t });
  const hedge = hedging?.won;
  return { outcome: { kind: 'stream', tier, call, relay: end.result.relay, attempts: walk.req.log.records, resume, ...(hedge ? { hedge } : {}) } };
}

/** A non-streaming try's verdict: the whole answer, or why not. */
function unaryResult(walk: Walk, tier: Tier, call: UpstreamCall, n: number, attempt: { readonly elapsedMs: number }, result: UnaryResult): Tried {
  if (!result.ok) return { error: result.error, elapsedMs: attempt.elapsedMs };
  walk.req.log.ok(tier, n, attempt.elapsedMs, result.answer.answer.status);
  walk.answered(tier);
  return { outcome: { kind: 'unary', tier, call, answer: result.answer, attempts: walk.req.log.records } };
}

/** The wait before the same tier is tried again, or null: the next tier is tried (or none is left). */
function retryDelay(walk: Walk, tier: Tier, error: AttemptError, n: number, lastTry: boolean): number | null {
  // A tier that timed out is not retried: the next tier is tried.
  if (error.timedOut || !error.retryable || lastTry) return null;
  // This failure may have opened the circuit (or failed its half-open trial): no retry then.
  if (!walk.allDown && !walk.app.gate.allows(tier)) return null;
  const delay = retryDelayMs(tier.retry, n, error.retryAfterMs, walk.app.random);
  if (delay === null) return null; // Retry-After longer than the retry budget: fail over now
  if (walk.req.request.stream && performance.now() + delay >= walk.deadlineAt) return null;
  return delay;
}
