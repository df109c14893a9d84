import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Route, Tier } from '../config/schema.js';
import type { AttemptRecord, RequestFinished, RequestOutcome } from '../telemetry/events.js';
import type { AppContext } from './app-context.js';
import { ClientLifetime } from './client-lifetime.js';
import { readChatBody } from './ingress.js';
import { type HeaderMap, sendError } from './respond.js';
import { routeRequest } from './route-request.js';
import type { StreamSink } from './stream-attempt.js';

/**
 * POST /v1/chat/completions, read top-down: ingress, route, then answer in one of the
 * shapes the routing loop can end in.
 */
export async function handleChatCompletions(req: IncomingMessage, res: ServerResponse, app: AppContext, id: string): Promise<void> {
  const arrivedAt = performance.now();
  const config = app.config;
  const ingress = await readChatBody(req, config.server.max_body_bytes);
  if (!ingress.ok) {
    if (ingress.status === 499) {
      res.destroy();
      return finishRejected(app, id, '', 499, arrivedAt, ingress.message);
    }
    const headers: HeaderMap = { 'x-request-id': id };
    if (ingress.status === 413) headers.connection = 'close';
    sendError(res, ingress.status, ingress.message, 'invalid_request_error', ingress.code, {}, headers);
    return finishRejected(app, id, '', ingress.status, arrivedAt, ingress.message);
  }
  const body = ingress.body;
  const routeName = body.model as string;
  const route = config.routes.get(routeName);
  if (!route) {
    const known = [...config.routes.keys()].join(', ');
    sendError(res, 404, `unknown route "${routeName}": the model must name a route (known: ${known})`, 'invalid_request_error', 'model_not_found', {}, { 'x-request-id': id });
    // Not labelled with the name: clients choose it, and metric series must stay bounded.
    return finishRejected(app, id, '', 404, arrivedAt, `unknown route "${routeName.slice(0, 100)}"`);
  }

  const stream = body.stream === true;
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  const clientWantsUsage = typeof options === 'object' && options !== null && options.include_usage === true;
  const client = new ClientLifetime();
  const onClose = (): void => {
    if (!res.writableFinished) client.abort();
  };
  res.once('close', onClose);
  app.inFlight.add(client);
  app.telemetry.emit({ type: 'request_start', id, route: route.name, stream, protocol: 'chat' });
  // The pools this request started with, even if a reload replaces them meanwhile.
  const pools = app.pools.acquire();
  let ttftMs = 0;
  const openStream = (tier: Tier, attempts: number): StreamSink => {
    ttftMs = performance.now() - arrivedAt;
    return openClientStream(res, app, { id, route: route.name, tier: tier.name, attempts, ttftMs });
  };

  try {
    const outcome = await routeRequest(
      { id, route, body, stream, clientWantsUsage, arrivedAt, client, openStream },
      { pools, gate: app.gate, telemetry: app.telemetry, random: app.random },
    );
    const base = { id, route: route.name, stream, attempts: outcome.attempts, arrivedAt };
    switch (outcome.kind) {
      case 'stream': {
        const end = await outcome.attempt.finished;
        const interruption = end.interruption;
        let result: RequestOutcome = 'ok';
        if (interruption) result = interruption.reason === 'client_abort' ? 'client_abort' : 'interrupted';
        return finish(app, base, {
          tier: outcome.tier.name, status: 200, outcome: result, ttftMs, usage: end.usage, chunkErrors: end.chunkErrors,
          committed: true, error: interruption?.message,
        });
      }
      case 'unary': {
        const { answer } = outcome;
        // A flat header list: the cheapest form for node:http on the hot path.
        res.writeHead(answer.status, [
          'x-request-id', id, 'x-llm-route-route', route.name, 'x-llm-route-tier', outcome.tier.name,
          'x-llm-route-attempts', String(outcome.attempts.length), 'content-type', answer.contentType, 'content-length', String(answer.body.length),
        ]);
        res.end(answer.body);
        return finish(app, base, { tier: outcome.tier.name, status: answer.status, outcome: 'ok', usage: answer.usage });
      }
      case 'rejected': {
        const upstream = outcome.error.upstream;
        const status = upstream?.status ?? 400;
        const contentType = upstream?.headers['content-type'];
        res.writeHead(status, {
          ...answerHeaders(id, route, outcome.tier, outcome.attempts.length),
          'content-type': typeof contentType === 'string' ? contentType : 'application/json',
        });
        res.end(upstream?.body ?? '');
        return finish(app, base, { tier: outcome.tier.name, status, outcome: 'upstream_rejected', error: outcome.error.message });
      }
      case 'exhausted':
        return sendExhausted(res, app, route, outcome.planned, outcome.timedOut, base);
      case 'aborted':
        if (!outcome.shutdown) {
          res.destroy();
          return finish(app, base, { tier: null, status: 499, outcome: 'client_abort' });
        }
        sendError(res, 503, 'llm-route is shutting down; try again', 'server_error', 'shutting_down', {}, { 'x-request-id': id, 'x-llm-route-route': route.name });
        return finish(app, base, { tier: null, status: 503, outcome: 'failed', error: 'shutting down' });
    }
  } catch (err) {
    // Still one request_end per request (the UI and metrics count on it); the 500 is the caller's.
    finish(app, { id, route: route.name, stream, attempts: [], arrivedAt }, { tier: null, status: 500, outcome: 'failed', error: 'internal error' });
    throw err;
  } finally {
    pools.release();
    app.inFlight.delete(client);
    res.off('close', onClose);
  }
}

interface RequestBase {
  id: string;
  route: string;
  stream: boolean;
  attempts: AttemptRecord[];
  arrivedAt: number;
}

/** The commit point of a stream: the client's status and headers, and the sink the relay writes to. */
function openClientStream(res: ServerResponse, app: AppContext, at: { id: string; route: string; tier: string; attempts: number; ttftMs: number }): StreamSink {
  app.telemetry.emit({ type: 'commit', id: at.id, route: at.route, tier: at.tier, ttftMs: at.ttftMs });
  res.writeHead(200, [
    'x-request-id', at.id, 'x-llm-route-route', at.route, 'x-llm-route-tier', at.tier,
    'x-llm-route-attempts', String(at.attempts), 'x-llm-route-ttft-ms', String(Math.round(at.ttftMs)),
    'content-type', 'text/event-stream; charset=utf-8', 'cache-control', 'no-cache', 'x-accel-buffering', 'no',
  ]);
  return {
    write: (data) => res.write(data),
    onceDrain: (resume) => res.once('drain', resume),
    end: (tail) => (tail ? res.end(tail) : res.end()),
  };
}

function sendExhausted(res: ServerResponse, app: AppContext, route: Route, planned: number, timedOut: boolean, base: RequestBase): void {
  const headers = { 'x-request-id': base.id, 'x-llm-route-route': route.name, 'x-llm-route-attempts': base.attempts.length };
  if (planned === 0 || base.attempts.length === 0) {
    const message = planned === 0
      ? `no tier of route "${route.name}" was drawn for this request: every tier is switched off (weight 0) or lost its weight draw`
      : `no tier of route "${route.name}" could take this request: each is recovering and its trial request is in progress; try again`;
    sendError(res, 503, message, 'upstream_error', 'no_tier_available', { attempts: [] }, headers);
    return finish(app, base, { tier: null, status: 503, outcome: 'failed', error: message });
  }
  const status = timedOut ? 504 : 502;
  const summary = base.attempts.map((a) => `${a.tier}#${a.attempt}: ${a.outcome}${a.status ? ` (HTTP ${a.status})` : ''}`).join('; ');
  const message = timedOut
    ? `every tier of route "${route.name}" timed out: ${summary}`
    : `every tier of route "${route.name}" failed: ${summary}`;
  sendError(res, status, message, 'upstream_error', timedOut ? 'all_tiers_timed_out' : 'all_tiers_failed', { attempts: base.attempts }, headers);
  finish(app, base, { tier: null, status, outcome: timedOut ? 'timeout' : 'failed', error: message });
}

function answerHeaders(id: string, route: Route, tier: Tier, attempts: number): HeaderMap {
  return { 'x-request-id': id, 'x-llm-route-route': route.name, 'x-llm-route-tier': tier.name, 'x-llm-route-attempts': attempts };
}

type FinishFields = Pick<RequestFinished, 'tier' | 'status' | 'outcome'> & Partial<Pick<RequestFinished, 'ttftMs' | 'usage' | 'chunkErrors' | 'committed' | 'error'>>;

function finish(app: AppContext, base: RequestBase, fields: FinishFields): void {
  const durationMs = performance.now() - base.arrivedAt;
  const tier = fields.tier === null ? undefined : app.config.routes.get(base.route)?.tiers.find((t) => t.name === fields.tier);
  app.telemetry.emit({
    type: 'request_end',
    id: base.id,
    route: base.route,
    stream: base.stream,
    attempts: base.attempts,
    durationMs,
    startedAt: Date.now() - durationMs,
    protocol: 'chat',
    provider: tier?.provider.name ?? null,
    model: tier?.model ?? null,
    committed: false,
    chunkErrors: 0,
    ...fields,
  });
}

function finishRejected(app: AppContext, id: string, route: string, status: number, arrivedAt: number, error: string): void {
  finish(app, { id, route, stream: false, attempts: [], arrivedAt }, { tier: null, status, outcome: 'bad_request', error });
}
