import type { IncomingMessage, ServerResponse } from 'node:http';
import { reachedOnlyByCatchAll } from '../config/find-route.js';
import type { Config, Route, Rule, Tier } from '../config/schema.js';
import { closesConnection, readJsonBody } from '../http/read-body.js';
import { requestText } from '../protocols/core/neutral.js';
import { type ClientCodec, type ClientRequest, isUnsupported } from '../protocols/core/types.js';
import type { Usage } from '../protocols/core/usage.js';
import type { RequestFinished, RequestOutcome, SaverMeasure } from '../telemetry/events.js';
import { reportsOf } from '../protocols/tool-text/scope.js';
import { Exchange, type FinishFields, type ProxyView } from './exchange.js';
import { enterIdempotent, type IdempotentRun } from './idempotent-request.js';
import { type Limited, routeRequest, type RoutingOutcome } from './route-request.js';
import { RequestAdmission } from './tier-admission.js';
import { refuseStream } from './refuse-stream.js';
import { PromptCount } from '../protocols/core/prompt-tokens.js';
import { detectTruncation, watchTruncation } from '../fit/truncation.js';
import { chooseRoute } from '../rules/choose-route.js';
import { tiersExcluded } from '../rules/local-only.js';

/**
 * A request for a model (Chat Completions, Responses, Messages), read top-down: admit it,
 * route it through the tiers, answer in whatever shape the routing loop ended in.
 */
export async function serveModelRequest(req: IncomingMessage, res: ServerResponse, app: ProxyView, codec: ClientCodec, id: string): Promise<void> {
  const exchange = new Exchange(app, res, codec, id);
  let admission: RequestAdmission | null = null;
  let idempotent: IdempotentRun | null = null;
  let streamSlot = false;
  try {
    const admitted = await admit(req, exchange);
    if (!admitted) return;
    const { request, savers } = await saveTokens(exchange, admitted.route, admitted.request, req);
    exchange.begin(admitted.route, request, { savers, rule: admitted.rule?.label });
    // No key, no deduplication: a request without one pays nothing here.
    const key = admitted.request.headers.idempotencyKey;
    if (key !== undefined) {
      const entered = await enterIdempotent(exchange, app.state.idempotency, admitted.request, key, exchange.config.idempotency);
      if (entered === 'answered') return;
      idempotent = entered;
    }
    // Only a stream that runs takes a slot (a duplicate waiting for its key's answer does not).
    if (request.stream) {
      streamSlot = app.streams.take(exchange.config.server.max_streams);
      if (!streamSlot) return refuseStream(exchange);
    }
    admission = RequestAdmission.for(admitted.route, exchange.config, app.state, request);
    const prompt = new PromptCount(request);
    const outcome = await routeRequest(
      {
        id,
        route: admitted.route,
        request,
        codec,
        port: exchange,
        arrivedAt: exchange.arrivedAt,
        client: exchange.client,
        pools: exchange.pools,
        admission,
        onFallback: idempotent?.onFallback,
        prompt,
      },
      app,
    );
    // A tier of unknown window that read suspiciously little: checked after the answer, said on a line of its own.
    const checkLate = (tier: Tier, usage: Usage | undefined): void =>
      watchTruncation(tier, usage, prompt, admitted.bytes, ({ sent, read }) =>
        app.telemetry.emit({ type: 'prompt_truncated', id, route: admitted.route.name, tier: tier.name, sent, read }),
      );
    await answer(exchange, admitted.route, request, outcome, admission, prompt, checkLate);
  } catch (err) {
    // A bug must cost one request, never the server; and it still ends with its request_end.
    process.stderr.write(`llm-route: internal error on ${req.method} ${req.url}: ${(err as Error).stack ?? err}\n`);
    exchange.respondError({ status: 500, kind: 'internal', code: 'internal_error', message: 'internal error in llm-route' });
    exchange.finish({ tier: null, status: 500, outcome: 'failed', error: 'internal error' });
  } finally {
    // Each release on its own: a throw in one must not keep the others (a key's record held forever).
    try {
      admission?.end(null);
      if (streamSlot) app.streams.give();
    } finally {
      try {
        if (idempotent) await idempotent.end(exchange);
      } finally {
        exchange.close();
      }
    }
  }
}

/** Reads, parses and validates the body and finds its route; null when the client was answered with an error. */
export async function admit(
  req: IncomingMessage,
  exchange: Exchange,
  { counting = false } = {},
): Promise<{ route: Route; request: ClientRequest; rule: Rule | null; bytes: number } | null> {
  const body = await readJsonBody(req, exchange.config.server.max_body_bytes);
  if (!body.ok) {
    if (body.status === 499) {
      exchange.drop();
      exchange.finish({ tier: null, status: 499, outcome: 'bad_request', error: body.message });
      return null;
    }
    exchange.respondError(
      { status: body.status, kind: 'invalid_request', code: body.code, message: body.message },
      closesConnection(body) ? { connection: 'close' } : {},
    );
    exchange.finish({ tier: null, status: body.status, outcome: 'bad_request', error: body.message });
    return null;
  }
  const parsed = exchange.codec.parse(withDefaultModel(body.value, exchange.config), req.headers);
  if (!parsed.ok) {
    exchange.respondError({ status: 400, kind: 'invalid_request', code: 'invalid_request', message: parsed.message });
    exchange.finish({ tier: null, status: 400, outcome: 'bad_request', error: parsed.message });
    return null;
  }
  const name = parsed.request.model;
  const choosing = chooseRoute(exchange.config, parsed.request, req.headers, body.bytes);
  const chosen = choosing instanceof Promise ? await choosing : choosing;
  if (!chosen) {
    const known = [...exchange.config.routes.keys()].join(', ');
    exchange.respondError({
      status: 404,
      kind: 'not_found',
      code: 'model_not_found',
      message: `unknown route "${name}": the model must name a route (known: ${known})`,
    });
    // Not labelled with the name: clients choose it, and metric series must stay bounded.
    exchange.finish({ tier: null, status: 404, outcome: 'bad_request', error: `unknown route "${name.slice(0, 100)}"` });
    return null;
  }
  const { route, rule } = chosen;
  // A typo (`caht`) that only a `*` alias caught is said once in the log (a rule's choice is no typo).
  if (rule === null && reachedOnlyByCatchAll(exchange.config, name, route)) exchange.noteCatchAll(route, name);
  // Local only, and no tier of the route is on the local network: fail closed, nothing sent.
  // A token count without a tier is llm-route's own estimate: nothing leaves the machine.
  if (route.tiers.length === 0 && !counting) {
    exchange.begin(route, parsed.request, { rule: rule?.label }); // its log line and metrics name the route
    noLocalTier(exchange, route.name, 'none of its tiers is on the local network', []);
    return null;
  }
  return { route, request: parsed.request, rule, bytes: body.bytes };
}

/** A body without `model` names the default route, when the tier file has one (as LiteLLM and llama.cpp accept). */
function withDefaultModel(body: unknown, config: Config): unknown {
  if (!config.default_route || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const model = (body as { model?: unknown }).model;
  return model === undefined || model === null || model === '' ? { ...body, model: config.default_route } : body;
}

/**
 * The route's token savers, before the first tier: the body every tier gets (fail-open: a
 * saver that throws or overruns is skipped), and what each saved, measured, for the request's end.
 */
async function saveTokens(
  exchange: Exchange,
  route: Route,
  request: ClientRequest,
  req: IncomingMessage,
): Promise<{ request: ClientRequest; savers?: SaverMeasure[] }> {
  if (route.savers.length === 0) return { request };
  // Loaded on use (preloaded by the server for a config with savers): routes without them never load them.
  const { applyRouteSavers } = await import('../savers/route-savers.js');
  const saved = await applyRouteSavers(route, request.protocol, request.body);
  const savers = saved.measures.length > 0 ? saved.measures : undefined;
  if (!saved.changed) return { request, savers };
  const reparsed = exchange.codec.parse(saved.body, req.headers);
  return { request: reparsed.ok ? reparsed.request : request, savers };
}

/** The request's tool calls written as text, for its end (none: nothing). */
function toolTextOf(request: ClientRequest): Pick<FinishFields, 'toolText'> {
  const reports = reportsOf(request);
  return reports.length > 0 ? { toolText: [...reports] } : {};
}

/**
 * Answers the client in the shape the routing loop ended in, and records the request's end.
 * The tier that answered settles its limits and budgets to what it used.
 */
async function answer(
  exchange: Exchange,
  route: Route,
  request: ClientRequest,
  outcome: RoutingOutcome,
  admission: RequestAdmission | null,
  prompt: PromptCount,
  checkLate: (tier: Tier, usage: Usage | undefined) => void,
): Promise<void> {
  const attempts = outcome.attempts;
  switch (outcome.kind) {
    case 'stream': {
      const end = await (outcome.recovery ? outcome.recovery.finish(outcome.relay) : outcome.relay.finished);
      admission?.end({ tier: outcome.tier, usage: end.usage, completionText: () => end.text });
      const interruption = end.interruption;
      let result: RequestOutcome = 'ok';
      if (interruption) result = interruption.reason === 'client_abort' ? 'client_abort' : 'interrupted';
      checkLate(outcome.tier, end.usage);
      return exchange.finish({
        tier: outcome.tier.name,
        status: 200,
        outcome: result,
        ttftMs: exchange.ttftMs,
        attempts,
        usage: end.usage,
        estimate: end.usage ? undefined : estimateOf(request, end.text, end.earlyUsage),
        chunkErrors: end.chunkErrors,
        committed: true,
        error: interruption?.message,
        ...(outcome.recovery?.resumed ? { resumed: outcome.recovery.resumed } : {}),
        ...(outcome.hedge ? { hedged: outcome.hedge.hedged, loserUsage: outcome.hedge.loserUsage } : {}),
        promptTruncated: detectTruncation(outcome.tier, end.usage ?? end.earlyUsage, prompt),
        ...toolTextOf(request),
      });
    }
    case 'unary': {
      const { answer: unary } = outcome;
      exchange.respond(unary.answer, outcome.tier, attempts.length);
      admission?.end({ tier: outcome.tier, usage: unary.usage, completionText: () => outcome.call.answerText(unary.upstreamBody) });
      checkLate(outcome.tier, unary.usage);
      return exchange.finish({
        tier: outcome.tier.name,
        status: unary.answer.status,
        outcome: 'ok',
        attempts,
        usage: unary.usage,
        estimate: unary.usage ? undefined : estimateOf(request, outcome.call.answerText(unary.upstreamBody)),
        promptTruncated: detectTruncation(outcome.tier, unary.usage, prompt),
        ...toolTextOf(request),
      });
    }
    case 'rejected':
      exchange.respond(outcome.answer, outcome.tier, attempts.length);
      return exchange.finish({ tier: outcome.tier.name, status: outcome.answer.status, outcome: 'upstream_rejected', attempts, error: outcome.error.message });
    case 'unsupported': {
      const message = `no tier of route "${route.name}" can carry this request: ${outcome.reasons.join('; ')}`;
      exchange.respondError(
        { status: 400, kind: 'invalid_request', code: 'unsupported_request', message, extra: { attempts } },
        { 'x-llm-route-attempts': attempts.length },
      );
      return exchange.finish({ tier: null, status: 400, outcome: 'bad_request', attempts, error: message });
    }
    case 'too_long':
      // Every tier failed for the prompt's size: a 400 in the client's protocol, which SDKs do not retry and agents compact on.
      exchange.respondError(
        { status: 400, kind: 'invalid_request', code: 'context_length_exceeded', message: outcome.failure.message, extra: { attempts } },
        { 'x-llm-route-attempts': attempts.length },
      );
      return exchange.finish({ tier: null, status: 400, outcome: 'bad_request', attempts, error: outcome.failure.message });
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
      return exhausted(exchange, route.name, outcome.planned, outcome.timedOut, attempts);
    case 'aborted':
      return exchange.endAborted(attempts);
  }
}

/**
 * No tier answered and at least one was skipped for llm-route's own limit or budget (SPEC "429
 * or 502"): 429, with Retry-After when the soonest of them takes requests again.
 */
function limitedAnswer(exchange: Exchange, route: string, limited: Limited, attempts: RequestFinished['attempts']): void {
  const retryAfterS = Math.max(1, Math.ceil(limited.retryAfterMs / 1000));
  const summary = attempts.map((a) => `${a.tier}: ${a.message ?? a.outcome}`).join('; ');
  const message =
    limited.outcome === 'budget'
      ? `route "${route}" is out of budget: ${summary}; retry after ${retryAfterS} s`
      : `route "${route}" is at its rate limits: ${summary}; retry after ${retryAfterS} s`;
  const code = limited.outcome === 'budget' ? 'budget_exhausted' : 'rate_limited';
  exchange.respondError(
    { status: 429, kind: 'rate_limit', code, message, extra: { attempts } },
    { 'retry-after': retryAfterS, 'x-llm-route-attempts': attempts.length },
  );
  exchange.finish({ tier: null, status: 429, outcome: 'failed', attempts, error: message });
}

/** SPEC "Local only": 503 no_local_tier, in the client's protocol (fails closed). */
function noLocalTier(exchange: Exchange, route: string, why: string, attempts: RequestFinished['attempts']): void {
  const message = `no_local_tier: route "${route}" is local-only for this request and ${why}`;
  exchange.respondError({ status: 503, kind: 'unavailable', code: 'no_local_tier', message, extra: { attempts } }, { 'x-llm-route-attempts': attempts.length });
  exchange.finish({ tier: null, status: 503, outcome: 'failed', attempts, error: message });
}

function exhausted(exchange: Exchange, route: string, planned: number, timedOut: boolean, attempts: RequestFinished['attempts']): void {
  const headers = { 'x-llm-route-attempts': attempts.length };
  if (planned === 0 || attempts.length === 0) {
    const message =
      planned === 0
        ? `no tier of route "${route}" was drawn for this request: every tier is switched off (weight 0) or lost its weight draw`
        : `no tier of route "${route}" could take this request: each is recovering and its trial request is in progress; try again`;
    exchange.respondError({ status: 503, kind: 'upstream', code: 'no_tier_available', message, extra: { attempts: [] } }, headers);
    return exchange.finish({ tier: null, status: 503, outcome: 'failed', attempts, error: message });
  }
  const status = timedOut ? 504 : 502;
  const summary = attempts.map((a) => `${a.tier}#${a.attempt}: ${a.outcome}${a.status ? ` (HTTP ${a.status})` : ''}`).join('; ');
  const message = timedOut ? `every tier of route "${route}" timed out: ${summary}` : `every tier of route "${route}" failed: ${summary}`;
  exchange.respondError({ status, kind: 'upstream', code: timedOut ? 'all_tiers_timed_out' : 'all_tiers_failed', message, extra: { attempts } }, headers);
  exchange.finish({ tier: null, status, outcome: timedOut ? 'timeout' : 'failed', attempts, error: message });
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
