import type { Tier } from '../config/schema.js';
import type { ShapedAnswer, UpstreamCall } from '../protocols/call.js';
import { type AttemptRecord, isLimitSkip } from '../telemetry/events.js';
import type { AttemptError } from './attempt-error.js';
import { reserveRetry, type AttemptSite, type Flight, type Limited, type Opening, openTier, type StreamPlace, startStream } from './attempt-start.js';
import { HedgeDoor, type HedgeEnd, race } from './hedge.js';
import { retryDelayMs } from './backoff.js';
import { sleep } from '../util/sleep.js';
import { LastTier } from './last-tier.js';
import { planTiers } from './plan.js';
import { answeredBy, sessionTier } from './session-stay.js';
import { Recovery } from './resume/recovery.js';
import { tierFit } from '../fit/tier-facts.js';
import { type PayloadFailure, payloadFailure, type TooLongNumbers } from '../fit/payload-failure.js';
import type { RoutingRequest, RoutingView } from './routing.js';
import type { CommitResult } from './stream-attempt.js';
import type { StreamRelay } from './stream-relay.js';
import type { UnaryAnswer, UnaryResult } from './unary-attempt.js';
import { wholeAnswerAttempt } from './embedding-attempt.js';

export type RoutingOutcome =
  | { kind: 'stream'; tier: Tier; call: UpstreamCall; relay: StreamRelay; attempts: AttemptRecord[]; recovery: Recovery | null; hedge?: HedgeEnd }
  | { kind: 'unary'; tier: Tier; call: UpstreamCall; answer: UnaryAnswer; attempts: AttemptRecord[] }
  /** The payload's fault: the upstream's own error goes to the client. */
  | { kind: 'rejected'; tier: Tier; answer: ShapedAnswer; error: AttemptError; attempts: AttemptRecord[] }
  /** No tier answered. `timedOut`: every attempt timed out, or the deadline passed (504). */
  | { kind: 'exhausted'; timedOut: boolean; planned: number; attempts: AttemptRecord[]; limited: Limited | null }
  /** No tier answered, and a tier that takes the client's own credential had none, or refused it: a 401 (or its 403). */
  | { kind: 'client_credential'; attempts: AttemptRecord[] }
  /** No planned tier can carry this request (an image URL for Ollama, n > 1 for Anthropic, …). */
  | { kind: 'unsupported'; reasons: string[]; attempts: AttemptRecord[] }
  /** No tier answered, each for the payload's sake, at least one because it is too long (docs/fit.md): a 400. */
  | { kind: 'too_long'; failure: PayloadFailure; attempts: AttemptRecord[] }
  /** The client left, or the server is stopping. `tier`: the one whose attempt was in flight then. */
  | { kind: 'aborted'; attempts: AttemptRecord[]; tier?: Tier };

/** One request's way through its plan: what the tiers said so far. */
interface Walk extends AttemptSite {
  plan: Tier[];
  /** Plan indexes below this one were opened (a hedge opens tiers ahead of the loop). */
  opened: number;
  /** A route with hedge_ms: every streaming attempt commits through it, so only one can. */
  door: HedgeDoor | null;
  /** A hedge that became the attempt in flight when the one it hedged failed: the next tier's first try. */
  carried: Flight | null;
  hedge?: HedgeEnd;
  unsupported: string[];
  tooLong: TooLongNumbers[];
  limited: Limited | null;
  allTimedOut: boolean;
  /** The request's session when the plan asked for it: the tier that answers is remembered for its next turn. */
  session: string | undefined;
}

/**
 * The routing loop: tiers in plan order, same-tier retries with backoff, failover on the
 * tier's faults. It returns at the first commit; after that nothing here runs again.
 */
export async function routeRequest(req: RoutingRequest, app: RoutingView): Promise<RoutingOutcome> {
  // The request's session, asked for only when the plan meets a weighted tier (a draw it could lose).
  let session: string | undefined;
  const stay = (): Tier | null => ((session = req.codec.session(req.request)) === undefined ? null : sessionTier(app.affinity, req.route, session));
  const { tiers: plan, allDown, affinity } = planTiers(req.route, app.gate, app.random, stay);
  if (affinity) req.affinity = true;
  const walk: Walk = {
    req,
    app,
    plan,
    allDown,
    deadlineAt: req.arrivedAt + req.route.deadline_ms,
    unsupported: [],
    tooLong: [],
    limited: null,
    allTimedOut: true,
    opened: 0,
    carried: null,
    door: null,
    session,
  };
  if (req.route.hedge_ms !== null && req.request.stream && plan.length > 1) walk.door = new HedgeDoor(req.port, req.log.records);
  for (let t = 0; t < plan.length; t++) {
    const carried = walk.carried?.t === t ? walk.carried : null;
    if (carried) walk.carried = null;
    else if (t < walk.opened) continue;
    walk.opened = Math.max(walk.opened, t + 1);
    // Answers at once unless a tokenizer or a limit must be waited for: no promise per tier otherwise.
    const opening = carried ? { open: true as const, call: carried.call } : openTier(walk, plan[t]);
    const opened = opening instanceof Promise ? await opening : opening;
    if (!opened.open) {
      if (opened.why === 'aborted') return { kind: 'aborted', attempts: req.log.records };
      noteRefusal(walk, plan[t], opened);
      continue;
    }
    const verdict = await tryTier(walk, t, opened.call, carried);
    if (verdict !== 'next') return verdict;
  }
  return noAnswer(walk);
}

/** Why a tier was passed over, kept for the request's answer when no tier answers. */
function noteRefusal(walk: Walk, tier: Tier, refused: Exclude<Opening, { open: true }>): void {
  if (refused.why === 'unsupported') walk.unsupported.push(`${tier.name}: ${refused.message}`);
  else if (refused.why === 'too_long') walk.tooLong.push(refused.numbers);
  else if (refused.why === 'limited' && (!walk.limited || refused.limited.retryAfterMs < walk.limited.retryAfterMs)) walk.limited = refused.limited;
}

/** The tier's tries: its answer, or 'next' (the loop goes on to the next tier), or why the loop stops. */
async function tryTier(walk: Walk, t: number, first: UpstreamCall, carried: Flight | null): Promise<'next' | RoutingOutcome> {
  const { req, app } = walk;
  const { log } = req;
  const attempts = log.records;
  const tier = walk.plan[t];
  let call = first;
  let lastError: AttemptError | null = null;
  /** One more try without what the tier refused and the client did not aim at it (call.retryWithout). */
  let resent = 0;
  let droppedSaid: UpstreamCall | null = null;

  for (let n = 1; n <= tier.retry.attempts + resent; n++) {
    if (req.client.aborted) return { kind: 'aborted', attempts };
    if (n > 1 && req.holds) {
      const again = await reserveRetry(walk, tier, n);
      if (again === 'aborted') return { kind: 'aborted', attempts };
      if (again === 'refused') break;
    }
    if (call.request.dropped && call !== droppedSaid) {
      app.telemetry.emit({ type: 'control_dropped', route: req.route.name, tier: tier.name, message: call.request.dropped });
      droppedSaid = call;
    }
    let tried: Tried;
    if (req.request.stream) {
      const flight = n === 1 && carried ? carried : startStream(walk, t, tier, call, n, placeOf(walk, t, call));
      if (!('attempt' in flight)) {
        log.deadlinePassed(tier, n, flight.message);
        return { kind: 'exhausted', timedOut: true, planned: walk.plan.length, attempts, limited: walk.limited };
      }
      tried = await streamTry(walk, flight);
    } else {
      const input = { tier, call, pool: req.pools.get(tier.provider), client: req.client, lastTier: lastTierOf(walk, t, call) };
      const attempt = wholeAnswerAttempt(req, app.spaces, input);
      tried = unaryResult(walk, tier, call, n, attempt, await attempt.result);
    }
    if ('kind' in tried) return tried;
    const error = tried.error;
    log.failed(tier, n, error, tried.elapsedMs);
    // The tier was at work when the client left (or the server stopped): on record, as is a hedge still racing.
    if (error.reason === 'client_abort' || error.reason === 'shutdown') return abortedAt(walk, tier);
    if (walk.carried) {
      // It failed while its hedge ran: the hedge is the attempt in flight now, whatever this one's fault.
      lastError = error;
      if (!error.timedOut) walk.allTimedOut = false;
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
      return { kind: 'rejected', tier, answer, error, attempts };
    }
    lastError = error;
    if (error.reason === 'context_length') walk.tooLong.push(payloadFailure.numbersOf(error, tierFit(tier).context));
    if (!error.timedOut) walk.allTimedOut = false;
    if (error.reason === 'deadline') return { kind: 'exhausted', timedOut: true, planned: walk.plan.length, attempts, limited: walk.limited };
    const delay = retryDelay(walk, tier, error, n, n === tier.retry.attempts + resent);
    if (delay === null) break;
    if (!(await sleep(delay, req.client))) return { kind: 'aborted', attempts };
  }

  log.left(tier);
  if (lastError && t < walk.plan.length - 1) {
    // The failed attempt was cancelled as it failed: undici's abort destroys its socket at once
    // (a request still waiting for a connection is aborted before a byte of it is written), so
    // the next tier never runs while this one still can: an idempotent request executes once.
    app.telemetry.emit({ type: 'failover', id: req.id, route: req.route.name, fromTier: tier.name, reason: lastError.reason });
    req.fellBack();
  }
  return 'next';
}

/** The request ends aborted while `tier` had an attempt in flight; a hedge handed on to is recorded with its own end. */
async function abortedAt(walk: Walk, tier: Tier): Promise<RoutingOutcome> {
  const hedge = walk.carried;
  const result = hedge && (await hedge.attempt.committed);
  if (hedge && result && !result.committed) walk.req.log.failed(hedge.tier, hedge.n, result.error, hedge.attempt.elapsedMs);
  return { kind: 'aborted', attempts: walk.req.log.records, tier };
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

type Tried = RoutingOutcome | { error: AttemptError; elapsedMs: number };

/** A streaming try's verdict: committed (the stream is the answer; the client was answered at commit), or why not. */
function streamResult(walk: Walk, flight: Flight, result: CommitResult): Tried {
  if (!result.committed) return { error: result.error, elapsedMs: flight.attempt.elapsedMs };
  const attempts = walk.req.log.records;
  const { tier, call, resume, t } = flight;
  walk.req.log.ok(tier, flight.n, result.elapsedMs);
  answeredBy(walk.app.affinity, walk.req.route, walk.session, tier);
  const recovery = resume && new Recovery({ site: walk, state: resume, plan: walk.plan, at: t });
  return { kind: 'stream', tier, call, relay: result.relay, attempts, recovery, ...(walk.hedge ? { hedge: walk.hedge } : {}) };
}

/** A streaming try: alone, or (hedge_ms) raced by the next tier's once it has no first content in time. */
async function streamTry(walk: Walk, flight: Flight): Promise<Tried> {
  const hedgeMs = walk.req.route.hedge_ms;
  // Routes without hedge_ms, and the plan's last tier, arm no timer.
  if (!walk.door || hedgeMs === null || flight.t >= walk.plan.length - 1) return streamResult(walk, flight, await flight.attempt.committed);
  const end = await race(flight, hedgeMs, walk.door, walk.req.arrivedAt, {
    start: (after) => startHedge(walk, after),
    failed: (hedge, error) => hedgeFailed(walk, hedge, error),
  });
  if (end.kind === 'alone') return streamResult(walk, flight, end.result);
  if (end.kind === 'handed') {
    walk.carried = end.next;
    return { error: end.error, elapsedMs: flight.attempt.elapsedMs };
  }
  const { loser, hedged } = end;
  // Its upstream may have billed what it reported before the abort: the loser's tier is charged it.
  const usage = loser.attempt.usageSoFar;
  walk.req.log.hedgeLost(loser.tier, loser.n, loser.attempt.elapsedMs, hedged.winner, usage);
  walk.hedge = { hedged, ...(usage ? { loserUsage: { tier: loser.tier.name, provider: loser.tier.provider.name, model: loser.tier.model, usage } } : {}) };
  return streamResult(walk, end.winner, end.result);
}

/** The next tier after plan index `after` that opens (each refusal recorded as the loop would), its attempt started through the door. */
async function startHedge(walk: Walk, after: number): Promise<Flight | null> {
  for (let u = Math.max(after + 1, walk.opened); u < walk.plan.length; u++) {
    walk.opened = u + 1;
    const tier = walk.plan[u];
    const opened = await openTier(walk, tier);
    if (!opened.open) {
      if (opened.why === 'aborted') return null;
      noteRefusal(walk, tier, opened);
      continue;
    }
    // The first committed while this tier's limit was waited for: no hedge after a commit.
    const flight = walk.door && !walk.door.committed ? startStream(walk, u, tier, opened.call, 1, placeOf(walk, u, opened.call)) : null;
    if (flight && 'attempt' in flight) {
      walk.req.fellBack();
      return flight;
    }
    walk.req.log.left(tier);
    return null;
  }
  return null;
}

/** A stream attempt's door on a hedged route, and its LastTier when it reads tool text; a plain stream's default: nothing made. */
function placeOf(walk: Walk, t: number, call: UpstreamCall): StreamPlace | undefined {
  const lastTier = lastTierOf(walk, t, call);
  return walk.door || lastTier ? { door: walk.door, lastTier } : undefined;
}

/** Whether plan index `t` is the last tier the request tries, for a call that reads tool calls written as text. */
function lastTierOf(walk: Walk, t: number, call: UpstreamCall): LastTier | undefined {
  return call.readsToolText ? new LastTier(walk.req, walk.plan, t) : undefined;
}

/** A hedge failed while the attempt it hedged runs on: recorded as any failure, its tier's hold given back. */
function hedgeFailed(walk: Walk, hedge: Flight, error: AttemptError): void {
  walk.req.log.failed(hedge.tier, hedge.n, error, hedge.attempt.elapsedMs);
  if (!error.timedOut) walk.allTimedOut = false;
  walk.req.log.left(hedge.tier);
}

/** A non-streaming try's verdict: the whole answer, or why not. */
function unaryResult(walk: Walk, tier: Tier, call: UpstreamCall, n: number, attempt: { readonly elapsedMs: number }, result: UnaryResult): Tried {
  if (!result.ok) return { error: result.error, elapsedMs: attempt.elapsedMs };
  walk.req.log.ok(tier, n, attempt.elapsedMs, result.answer.answer.status);
  answeredBy(walk.app.affinity, walk.req.route, walk.session, tier);
  return { kind: 'unary', tier, call, answer: result.answer, attempts: walk.req.log.records };
}

/** Every planned tier was passed over or failed: why, in the shape the client's answer takes. */
async function noAnswer(walk: Walk): Promise<RoutingOutcome> {
  const { unsupported } = walk;
  const attempts = walk.req.log.records;
  // What the client can fix comes first: the credential a tier needed, or refused (an expired login: the client logs in again).
  if (attempts.some((a) => a.outcome === 'no_client_credential' || a.outcome === 'credential_rejected')) return { kind: 'client_credential', attempts };
  if (unsupported.length > 0 && unsupported.length === attempts.length) return { kind: 'unsupported', reasons: unsupported, attempts };
  const failure = await payloadFailure.of(attempts, walk.tooLong, walk.req.prompt);
  if (failure) return { kind: 'too_long', failure, attempts };
  const tried = attempts.filter((a) => a.outcome !== 'unsupported' && !isLimitSkip(a));
  return { kind: 'exhausted', timedOut: tried.length > 0 && walk.allTimedOut, planned: walk.plan.length, attempts, limited: walk.limited };
}
