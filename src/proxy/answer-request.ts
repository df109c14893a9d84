import type { Tier } from '../config/schema.js';
import { requestText } from '../protocols/core/neutral.js';
import { type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import type { ErrorSpec } from '../protocols/core/client-codec.js';
import type { Usage } from '../protocols/core/usage.js';
import type { RequestFinished, RequestOutcome } from '../telemetry/events.js';
import { detectTruncation, watchTruncation } from '../fit/truncation.js';
import type { ClientAnswer } from './exchange.js';
import type { FinishFields } from './request-end.js';
import type { Limited } from './attempt-start.js';
import type { RoutingOutcome } from './routing-outcome.js';
import type { RoutingRequest } from './routing.js';
import { tiersExcluded } from '../rules/local-only.js';

/** What a client whose protocol carries no key for a from_client provider (Ollama's API) is told. */
const NO_CREDENTIAL_ADVICE = "this client's API carries no key or login for it: give the route a tier with a key of its own";

type Attempts = RequestFinished['attempts'];

// The end of model-request.ts's story: the routing loop's outcome becomes the client's answer
// (in its protocol) and the request's record (usage, attempts, what the log line carries).

/**
 * Answers the client in the shape the routing loop ended in, and records the request's end.
 * The tier that answered is charged what it used (each tier of a resumed stream its own part).
 * Only a stream's answer is waited for (a promise); every other is given at once.
 */
export function answer(exchange: ClientAnswer, outcome: RoutingOutcome): Promise<void> | void {
  const req = exchange.routing;
  const { route } = req;
  const attempts = outcome.attempts;
  switch (outcome.kind) {
    case 'stream':
      return answerStream(exchange, req, outcome);
    case 'unary': {
      const { answer: unary } = outcome;
      exchange.respond(unary.answer, outcome.tier, attempts.length);
      const text = unary.usage ? '' : outcome.call.answerText(unary.upstreamBody);
      req.log.spent(outcome.tier, unary.usage, text);
      checkLate(req, outcome.tier, unary.usage);
      return exchange.finish({
        tier: outcome.tier.name,
        status: unary.answer.status,
        outcome: 'ok',
        attempts,
        usage: unary.usage,
        estimate: unary.usage ? undefined : estimateOf(req.request, text),
        promptTruncated: req.request.embedding ? undefined : detectTruncation(outcome.tier, unary.usage, req.prompt),
        toolText: toolTextOf(req),
        embeddings: unary.embeddings,
        answerFacts: unary.facts,
      });
    }
    case 'rejected':
      exchange.respond(outcome.answer, outcome.tier, attempts.length);
      return exchange.finish({ tier: outcome.tier.name, status: outcome.answer.status, outcome: 'upstream_rejected', attempts, error: outcome.error.message });
    case 'client_credential':
      return clientCredentialAnswer(exchange, route.name, attempts);
    case 'unsupported': {
      const message = `no tier of route "${route.name}" can carry this request: ${outcome.reasons.join('; ')}`;
      return failWith(exchange, { status: 400, kind: 'invalid_request', code: 'unsupported_request', message }, 'bad_request', attempts);
    }
    case 'too_long': {
      // Every tier failed for the prompt's size: a 400 in the client's protocol, which SDKs do not retry and agents compact on.
      const cutting = req.request.embedding ? `; an embeddings input is cut to fit only when the client allows it (Ollama's truncate)` : '';
      return failWith(
        exchange,
        { status: 400, kind: 'invalid_request', code: 'context_length_exceeded', message: `${outcome.failure.message}${cutting}` },
        'bad_request',
        attempts,
      );
    }
    case 'exhausted':
      if (outcome.limited) return limitedAnswer(exchange, route.name, outcome.limited, attempts);
      // Local tiers failed where a cloud one was left out: the pin, not the tiers, is why there is no answer.
      if (tiersExcluded(route) > 0)
        return noLocalTier(
          exchange,
          route.name,
          `its local tiers could not answer (${attempts.map((a) => `${a.tier}: ${a.outcome}`).join('; ') || 'none was drawn'})`,
          attempts,
        );
      // Vectors never cross spaces: no tier of the route's space answered, and none of another is tried.
      if (route.embedding) return spaceExhausted(exchange, route.name, route.embedding.space, attempts);
      return exhausted(exchange, route.name, outcome.planned, outcome.timedOut, attempts);
    case 'aborted':
      return exchange.endAborted(attempts, outcome.tier?.name);
  }
}

/** A committed stream, to its end (a resume's too): its tiers charged, its record written. */
async function answerStream(exchange: ClientAnswer, req: RoutingRequest, outcome: Extract<RoutingOutcome, { kind: 'stream' }>): Promise<void> {
  const first = await outcome.relay.finished;
  // The committed tier's own part: the whole answer, or what it delivered before a break a resume mends.
  req.log.spent(outcome.tier, first.usage, first.text);
  const end = outcome.resume && first.open && first.interruption ? await outcome.resume.finish(first) : first;
  const interruption = end.interruption;
  let result: RequestOutcome = 'ok';
  if (interruption) result = interruption.reason === 'client_abort' ? 'client_abort' : 'interrupted';
  checkLate(req, outcome.tier, end.usage);
  exchange.finish({
    tier: outcome.tier.name,
    status: 200,
    outcome: result,
    ttftMs: exchange.ttftMs,
    attempts: outcome.attempts,
    usage: end.usage,
    estimate: end.usage ? undefined : estimateOf(req.request, end.text, end.earlyUsage),
    chunkErrors: end.chunkErrors,
    finishReason: end.finishReason,
    responseModel: end.responseModel,
    committed: true,
    error: interruption?.message,
    resumed: outcome.resume?.resumed ?? undefined,
    hedged: outcome.hedge?.hedged,
    loserUsage: outcome.hedge?.loserUsage,
    promptTruncated: detectTruncation(outcome.tier, end.usage ?? end.earlyUsage, req.prompt),
    toolText: toolTextOf(req),
  });
}

/** The request's tool calls written as text, for its end (none: nothing). */
function toolTextOf(req: RoutingRequest): FinishFields['toolText'] {
  const reports = req.toolTextReports;
  return reports.length > 0 ? [...reports] : undefined;
}

/** A tier of unknown window that read suspiciously little: checked after the answer, said on a line of its own. */
function checkLate(req: RoutingRequest, tier: Tier, usage: Usage | undefined): void {
  // An embeddings batch's tokens are many prompts' (each cut on its own): they say nothing of a window.
  if (req.request.embedding) return;
  watchTruncation(tier, usage, req.prompt, req.bodyBytes, (truncation) => req.notePromptTruncated(tier, truncation));
}

/** No tier answered: an error of llm-route's own, carrying the attempts (in the body and the x-llm-route-attempts header). */
function failWith(exchange: ClientAnswer, error: ErrorSpec, outcome: RequestOutcome, attempts: Attempts, headers: Record<string, string | number> = {}): void {
  exchange.fail({ ...error, extra: { attempts } }, { outcome, attempts }, { ...headers, 'x-llm-route-attempts': attempts.length });
}

/**
 * No tier answered and at least one was skipped for llm-route's own limit or budget (docs/routing.md,
 * "When no tier answers"): 429, with Retry-After when the soonest of them takes requests again.
 */
function limitedAnswer(exchange: ClientAnswer, route: string, limited: Limited, attempts: Attempts): void {
  const retryAfterS = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
  const summary = attempts.map((a) => `${a.tier}: ${a.message ?? a.outcome}`).join('; ');
  const message =
    limited.outcome === 'budget'
      ? `route "${route}" is out of budget: ${summary}; retry after ${retryAfterS} s`
      : `route "${route}" is at its rate limits: ${summary}; retry after ${retryAfterS} s`;
  const code = limited.outcome === 'budget' ? 'budget_exhausted' : 'rate_limited';
  failWith(exchange, { status: 429, kind: 'rate_limit', code, message }, 'failed', attempts, { 'retry-after': retryAfterS });
}

/**
 * No tier answered, and one that takes the client's own credential (api_key: from_client) had
 * none for it, or refused it: 401 in the client's protocol, saying what its user sets (403 when
 * every refusal was one: the login is valid, it may not do this). A client that renews its login
 * on a 401 (Claude Code) then does.
 */
function clientCredentialAnswer(exchange: ClientAnswer, route: string, attempts: Attempts): void {
  const missing = attempts.filter((a) => a.outcome === 'no_client_credential');
  const refused = attempts.filter((a) => a.outcome === 'credential_rejected');
  const reasons = [...missing.map((a) => `${a.tier}: ${a.message}`), ...refused.map((a) => `${a.tier} refused the client's credential: ${a.message}`)];
  const token =
    missing.length > 0 && exchange.config.server.auth_token
      ? "; llm-route's own token (server.auth_token) then goes in x-llm-route-token, since Authorization and x-api-key carry yours"
      : '';
  const message = `route "${route}" needs your own key or login: ${reasons.join('; ')}; ${exchange.codec.credential?.advice ?? NO_CREDENTIAL_ADVICE}${token}`;
  const forbidden = missing.length === 0 && refused.every((a) => a.status === 403);
  const error = forbidden
    ? ({ status: 403, kind: 'forbidden', code: 'client_credential_refused' } as const)
    : ({ status: 401, kind: 'authentication', code: missing.length > 0 ? 'missing_client_credential' : 'client_credential_refused' } as const);
  failWith(exchange, { ...error, message }, 'failed', attempts);
}

/** docs/rules.md: 503 no_local_tier, in the client's protocol (fails closed). */
export function noLocalTier(exchange: ClientAnswer, route: string, why: string, attempts: Attempts): void {
  const message = `no_local_tier: route "${route}" is local-only for this request and ${why}`;
  failWith(exchange, { status: 503, kind: 'unavailable', code: 'no_local_tier', message }, 'failed', attempts);
}

/** docs/embeddings.md: no tier of an embeddings route's space answered: 503 naming the space (an answer from another space would corrupt the client's index). */
function spaceExhausted(exchange: ClientAnswer, route: string, space: string, attempts: Attempts): void {
  const summary = attempts.map((a) => `${a.tier}#${a.attempt}: ${a.outcome}${a.status ? ` (HTTP ${a.status})` : ''}`).join('; ') || 'none was drawn';
  const message = `no tier of vector space "${space}" (route "${route}") could answer, and vectors of another space are never served instead: ${summary}`;
  failWith(exchange, { status: 503, kind: 'unavailable', code: 'space_unavailable', message }, 'failed', attempts);
}

function exhausted(exchange: ClientAnswer, route: string, planned: number, timedOut: boolean, attempts: Attempts): void {
  if (planned === 0 || attempts.length === 0) {
    const message =
      planned === 0
        ? `no tier of route "${route}" was drawn for this request: every tier is switched off (weight 0) or lost its weight draw`
        : `no tier of route "${route}" could take this request: each is recovering and its trial request is in progress; try again`;
    return failWith(exchange, { status: 503, kind: 'upstream', code: 'no_tier_available', message }, 'failed', attempts);
  }
  const status = timedOut ? 504 : 502;
  const summary = attempts.map((a) => `${a.tier}#${a.attempt}: ${a.outcome}${a.status ? ` (HTTP ${a.status})` : ''}`).join('; ');
  const message = timedOut ? `every tier of route "${route}" timed out: ${summary}` : `every tier of route "${route}" failed: ${summary}`;
  failWith(
    exchange,
    { status, kind: 'upstream', code: timedOut ? 'all_tiers_timed_out' : 'all_tiers_failed', message },
    timedOut ? 'timeout' : 'failed',
    attempts,
  );
}

/**
 * The texts to count when a tier reported no usage (counted off the request path); a stream
 * cut before its finish keeps the prompt figures its upstream had already reported.
 */
function estimateOf(request: ClientRequest, completionText: string, earlyUsage?: Usage): RequestFinished['estimate'] {
  if (earlyUsage && earlyUsage.prompt_tokens > 0) {
    return { promptText: '', completionText, prompt: { tokens: earlyUsage.prompt_tokens, cached: earlyUsage.cached_tokens ?? 0 } };
  }
  const neutral = request.neutral();
  return { promptText: isUnsupported(neutral) ? '' : requestText(neutral), completionText };
}
