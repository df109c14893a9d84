import type { Tier } from '../config/schema.js';
import { UpstreamCall } from '../protocols/call.js';
import { isUnsupported } from '../protocols/core/types.js';
import type { StreamOutput } from '../protocols/core/stream-output.js';
import { missingCredential } from '../protocols/core/credential.js';
import { type FittedCall, fitCall, type Prepare } from '../fit/fit-call.js';
import type { TooLongNumbers } from '../fit/payload-failure.js';
import { type AttemptError, timeoutError } from './attempt-error.js';
import type { LastTier } from './last-tier.js';
import { ResumeState } from './resume/resume-state.js';
import type { RoutingRequest, RoutingView } from './routing.js';
import type { CommitPort } from './stream-sink.js';
import { StreamAttempt } from './stream-attempt.js';

export type { Prepare };

/**
 * Where attempts of one request start: failover, mid-stream resume and hedging all open
 * their tiers (openTier) and start their streams (startStream) here, so none can skip a step.
 */
export interface AttemptSite {
  req: RoutingRequest;
  app: RoutingView;
  /** performance.now() when the route's deadline passes. */
  deadlineAt: number;
  /** Every planned tier is down: they are tried without half-open trial claims. */
  allDown: boolean;
}

/** The soonest a tier skipped for llm-route's own limit or budget takes requests again. */
export interface Limited {
  outcome: 'budget' | 'rate_limited';
  retryAfterMs: number;
}

/** A tier opened for this request, or why not (each refusal already recorded in the request's attempts). */
export type Opening =
  | { open: true; call: UpstreamCall }
  | { open: false; why: 'unsupported'; message: string }
  /** The tier takes the client's own credential (api_key: from_client) and the request has none for it. */
  | { open: false; why: 'no_client_credential'; message: string }
  | { open: false; why: 'too_long'; numbers: TooLongNumbers }
  | { open: false; why: 'limited'; limited: Limited }
  /** Another request holds the tier's half-open trial. */
  | { open: false; why: 'trial_taken' }
  | { open: false; why: 'aborted' };

export interface OpenOptions {
  prepare?: Prepare;
  /** The request already holds the tier's room (one more try on it): only its rpm is asked again. */
  held?: boolean;
  /** The try's number on the tier, as its record says (1 unless held). */
  n?: number;
}

/**
 * A tier's steps before its first attempt, in order: can it carry the request, does the
 * request fit it (with Ollama's num_ctx set), llm-route's own limits and budgets, its
 * half-open trial. Synchronous unless a tokenizer or a limit must be waited for.
 */
export function openTier(site: AttemptSite, tier: Tier, options: OpenOptions = {}): Opening | Promise<Opening> {
  const { req } = site;
  // Nothing is sent without the credential the tier needs, and its health is not concerned.
  const missing = missingCredential(tier.provider, req.request.headers.credential);
  if (missing !== null) return refused(site, tier, 'no_client_credential', missing);
  const prepare = options.prepare ?? ((t: Tier) => UpstreamCall.prepare(t, req.codec, req.request, req.toolTextFor(t)));
  const prepared = prepare(tier);
  if (isUnsupported(prepared)) return refused(site, tier, 'unsupported', prepared.unsupported);
  if (req.request.operation === 'count_tokens') return reserve(site, tier, prepared);
  const fitted = fitCall(tier, req.request, prepared, req.prompt, prepare);
  return fitted instanceof Promise ? fitted.then((f) => afterFit(site, tier, f, options)) : afterFit(site, tier, fitted, options);
}

function afterFit(site: AttemptSite, tier: Tier, fitted: FittedCall, options: OpenOptions): Opening | Promise<Opening> {
  if (fitted.fits) return options.held ? reserveAgain(site, tier, fitted.call, options.n ?? 1) : reserve(site, tier, fitted.call);
  // Nothing is sent to a tier that cannot hold the request: no health penalty either.
  if (fitted.outcome === 'unsupported') return refused(site, tier, 'unsupported', fitted.message);
  site.req.log.skipped(tier, 1, fitted.outcome, fitted.message);
  return { open: false, why: 'too_long', numbers: { prompt: fitted.prompt, limit: fitted.limit } };
}

function refused(site: AttemptSite, tier: Tier, outcome: 'unsupported' | 'no_client_credential', message: string): Opening {
  site.req.log.skipped(tier, 1, outcome, message);
  return { open: false, why: outcome, message };
}

/** Takes the tier's hold under llm-route's own limits and budgets (a route with none waits for nothing), then its half-open trial. */
function reserve(site: AttemptSite, tier: Tier, call: UpstreamCall): Opening | Promise<Opening> {
  const holds = site.req.holds;
  if (!holds) return claimTrial(site, tier, call);
  return holds.reserve(tier, site.req.client, waitBudget(site)).then((entry): Opening => {
    if (entry.ok) return claimTrial(site, tier, call);
    if (entry.outcome === 'aborted') return { open: false, why: 'aborted' };
    // Skipped by llm-route's own limit or budget: no request was sent, the tier's health is not concerned.
    site.req.log.skipped(tier, 1, entry.outcome, entry.message, entry.waitedMs);
    return { open: false, why: 'limited', limited: { outcome: entry.outcome, retryAfterMs: entry.retryAfterMs } };
  });
}

/** One more request at a tier the request holds: it needs room in its provider's rpm bucket. */
function reserveAgain(site: AttemptSite, tier: Tier, call: UpstreamCall, n: number): Opening | Promise<Opening> {
  if (!site.req.holds) return { open: true, call };
  return reserveRetry(site, tier, n).then((verdict): Opening => {
    if (verdict === 'ok') return { open: true, call };
    if (verdict === 'aborted') return { open: false, why: 'aborted' };
    return { open: false, why: 'limited', limited: { outcome: 'rate_limited', retryAfterMs: 0 } };
  });
}

/** One more try at a tier the request holds: room in its provider's rpm bucket (waiting as entering does), else recorded. */
export async function reserveRetry(site: AttemptSite, tier: Tier, n: number): Promise<'ok' | 'refused' | 'aborted'> {
  const holds = site.req.holds;
  if (!holds || (await holds.reserveRetry(tier, site.req.client, waitBudget(site)))) return 'ok';
  if (site.req.client.aborted) return 'aborted';
  site.req.log.skipped(tier, n, 'rate_limited', `provider ${tier.provider.name} at its rpm limit: no retry`);
  return 'refused';
}

/** Another request took this tier's half-open trial since planning: leave the trial to it. */
function claimTrial(site: AttemptSite, tier: Tier, call: UpstreamCall): Opening {
  if (site.allDown || site.app.gate.claim(tier)) return { open: true, call };
  site.req.log.left(tier);
  return { open: false, why: 'trial_taken' };
}

/** How long a limit may keep a stream waiting: what is left of its deadline. */
export function waitBudget(site: AttemptSite): number {
  return site.req.request.stream ? site.deadlineAt - performance.now() : Infinity;
}

/** A streaming attempt on its way, and what it was started with. */
export interface Flight {
  /** Its tier's place in the request's plan. */
  t: number;
  tier: Tier;
  call: UpstreamCall;
  attempt: StreamAttempt;
  /** What the client has of it, on a resume route (null elsewhere, and for a resume's own attempt). */
  resumeState: ResumeState | null;
  /** Its try number on its tier. */
  n: number;
}

/** Where attempts that may race commit (a route with hedge_ms: the HedgeDoor): a port per attempt, tied to it once it exists. */
export interface Door {
  portFor(): CommitPort & { attempt: StreamAttempt | null };
  enter(attempt: StreamAttempt, port: { attempt: StreamAttempt | null }): void;
}

/** What only the caller knows of a streaming attempt; every field has the plain stream's default. */
export interface StreamPlace {
  /** How its events reach the client (default: the call's own output; on a resume route, one that keeps what the client has). */
  output?: StreamOutput;
  /** Where its first content goes (default: the request's port, the exchange). */
  port?: CommitPort;
  /** Racing attempts commit through it, so only one can. */
  door?: Door | null;
  lastTier?: LastTier;
}

const PLAIN: StreamPlace = {};

/**
 * The one way a streaming attempt starts, for failover, hedging and resume alike: on an
 * opened tier, with its TTFT budget — cold_ttft_ms for a tier that is cold (it may have to load
 * its model), else ttft_ms, cut to what the route's deadline leaves — or (nothing sent) the
 * deadline that has passed. On a resume route it keeps what the client has, for a resume.
 */
export function startStream(site: AttemptSite, t: number, tier: Tier, call: UpstreamCall, n: number, place: StreamPlace = PLAIN): Flight | AttemptError {
  const { req, app } = site;
  const remaining = site.deadlineAt - performance.now();
  if (remaining <= 0) return timeoutError('deadline', req.route.deadline_ms, 'first_token');
  const ttftMs = app.gate.isCold(tier) ? tier.timeouts.cold_ttft_ms : tier.timeouts.ttft_ms;
  const budget = Math.min(ttftMs, Math.ceil(remaining));
  // Only a resume route keeps what the client has (src/proxy/resume/resume-state.ts); others pay nothing.
  const resume =
    place.output === undefined && req.route.on_break === 'resume' && req.route.resume_max > 0
      ? new ResumeState(call, req.codec, req.request, req.route.stall)
      : null;
  const door = place.door;
  const port = door ? door.portFor() : null;
  const attempt = new StreamAttempt({
    tier,
    call,
    pool: req.pools.get(tier.provider),
    client: req.client,
    ttftBudgetMs: budget,
    ttftLimit: budget < ttftMs ? 'deadline' : 'ttft_timeout',
    output: place.output ?? (resume ? resume.output : call.streamOutput()),
    port: port ?? place.port ?? req.port,
    keepOpen: resume?.keepOpen,
    stall: resume?.stall,
    ordinal: req.log.records.length + 1,
    telemetry: app.telemetry,
    route: req.route.name,
    requestId: req.id,
    lastTier: place.lastTier,
  });
  if (door && port) door.enter(attempt, port);
  return { t, tier, call, attempt, resumeState: resume, n };
}
