import type { IncomingMessage, ServerResponse } from 'node:http';
import { reachedOnlyByCatchAll } from '../config/find-route.js';
import type { Config, Route, Rule } from '../config/schema.js';
import { closesConnection, readJsonBody } from '../http/read-body.js';
import type { ClientRequest } from '../protocols/core/types.js';
import { type ClientCodec, PLAIN_TARGET, type RequestTarget } from '../protocols/core/client-codec.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { SaverMeasure } from '../telemetry/events.js';
import { answer, noLocalTier } from './answer-request.js';
import { Exchange, type ProxyView } from './exchange.js';
import { enterIdempotent, type IdempotentRun } from './idempotent-request.js';
import { routeRequest } from './route-request.js';
import { refuseStream } from './refuse-stream.js';
import { wrongKind } from './route-kind.js';
import { serveModelLoad } from './model-load.js';
import { chooseRoute } from '../rules/choose-route.js';
import { takesClientCredentials } from '../config/all-tiers.js';
import { captureCredential, type ClientCredential } from '../protocols/core/credential.js';

/**
 * A request for a model (Chat Completions, Responses, Messages), read top-down: read it,
 * route it through the tiers, answer in whatever shape the routing loop ended in.
 */
export async function serveModelRequest(
  req: IncomingMessage,
  res: ServerResponse,
  app: ProxyView,
  codec: ClientCodec,
  id: string,
  target: RequestTarget = PLAIN_TARGET,
): Promise<void> {
  const exchange = new Exchange(app, res, codec, id);
  let idempotent: IdempotentRun | null = null;
  let streamSlot = false;
  try {
    const incoming = await readRequest(req, exchange, app.telemetry, target);
    if (!incoming) return;
    // A request that only loads (or unloads) the model is no generation: answered apart (model-load.ts).
    const loading = exchange.codec.loading;
    const asked = loading?.asks(incoming.request.body);
    if (loading && asked) return await serveModelLoad(exchange, app, incoming.route, incoming.request, loading, asked);
    // Most routes have no savers: no call and no await for them.
    const saved = incoming.route.savers.length === 0 ? null : await saveTokens(exchange, incoming.route, incoming.request, req, target);
    const request = saved?.request ?? incoming.request;
    const routing = exchange.begin(incoming.route, request, { savers: saved?.savers, rule: incoming.rule?.label, bytes: incoming.bytes });
    // No key, no deduplication: a request without one pays nothing here.
    const key = incoming.request.headers.idempotencyKey;
    if (key !== undefined) {
      const entered = await enterIdempotent(exchange, app.state.idempotency, incoming.request, key, exchange.config.idempotency);
      if (entered === 'answered') return;
      idempotent = entered;
      routing.fallbackWatch = entered;
    }
    // Only a stream that runs takes a slot (a duplicate waiting for its key's answer does not).
    if (request.stream) {
      streamSlot = app.streams.take(exchange.config.server.max_streams);
      if (!streamSlot) return refuseStream(exchange);
    }
    // Only a stream's answer is waited for: a whole answer goes out at once.
    const answering = answer(exchange, await routeRequest(routing, app));
    if (answering instanceof Promise) await answering;
  } catch (err) {
    // A bug must cost one request, never the server; and it still ends with its request_end.
    // The path only: a query may carry a key (Gemini's `?key=`).
    process.stderr.write(`llm-route: internal error on ${req.method} ${(req.url ?? '').split('?')[0]}: ${(err as Error).stack ?? err}\n`);
    exchange.fail(
      { status: 500, kind: 'internal', code: 'internal_error', message: 'internal error in llm-route' },
      { outcome: 'failed', logged: 'internal error' },
    );
  } finally {
    // Each release on its own: a throw in one must not keep the others (a key's record held forever).
    try {
      if (streamSlot) app.streams.give();
    } finally {
      try {
        if (idempotent) await idempotent.end(exchange);
      } finally {
        // What it holds at its tiers, its pools, its place among the requests in flight.
        exchange.close();
      }
    }
  }
}

/** Reads, parses and validates the body and finds its route; null when the client was answered with an error. */
export async function readRequest(
  req: IncomingMessage,
  exchange: Exchange,
  telemetry: TelemetryBus,
  target: RequestTarget,
  { counting = false } = {},
): Promise<{ route: Route; request: ClientRequest; rule: Rule | null; bytes: number } | null> {
  const body = await readJsonBody(req, exchange.config.server.max_body_bytes, exchange.codec.anyContentType);
  if (!body.ok) {
    if (body.status === 499) {
      exchange.drop();
      exchange.finish({ tier: null, status: 499, outcome: 'bad_request', error: body.message });
      return null;
    }
    const error = { status: body.status, kind: 'invalid_request', code: body.code, message: body.message } as const;
    exchange.fail(error, { outcome: 'bad_request' }, closesConnection(body) ? { connection: 'close' } : {});
    return null;
  }
  // A route named in the path (Gemini's) is never a body's: the body keeps no `model` it did not send.
  const sent = target.model === undefined ? withDefaultModel(body.value, exchange.config) : body.value;
  const parsed = exchange.codec.parse(sent, req.headers, credentialOf(req, exchange, target), target);
  if (!parsed.ok) {
    exchange.fail({ status: 400, kind: 'invalid_request', code: 'invalid_request', message: parsed.message }, { outcome: 'bad_request' });
    return null;
  }
  const name = parsed.request.model;
  const choosing = chooseRoute(exchange.config, parsed.request, req.headers, body.bytes);
  const chosen = choosing instanceof Promise ? await choosing : choosing;
  if (!chosen) {
    const known = [...exchange.config.routes.keys()].join(', ');
    const message = `unknown route "${name}": the model must name a route (known: ${known})`;
    // Not labelled with the whole name: clients choose it, and metric series must stay bounded.
    exchange.fail(
      { status: 404, kind: 'not_found', code: 'model_not_found', message },
      { outcome: 'bad_request', logged: `unknown route "${name.slice(0, 100)}"` },
    );
    return null;
  }
  const { route, rule } = chosen;
  const wrong = wrongKind(exchange.config, route, parsed.request);
  if (wrong) {
    exchange.begin(route, parsed.request, { rule: rule?.label, announce: !counting }); // its log line and metrics name the route
    exchange.fail({ status: 400, kind: 'invalid_request', code: 'wrong_route_kind', message: wrong }, { outcome: 'bad_request' });
    return null;
  }
  // A typo (`caht`) that only a `*` alias caught is said once in the log (a rule's choice is no typo).
  if (rule === null && reachedOnlyByCatchAll(exchange.config, name, route))
    telemetry.emit({ type: 'catch_all_alias', route: route.name, model: name.slice(0, 100) });
  // Local only, and no tier of the route is on the local network: fail closed, nothing sent.
  // A token count without a tier is llm-route's own estimate: nothing leaves the machine.
  if (route.tiers.length === 0 && !counting) {
    exchange.begin(route, parsed.request, { rule: rule?.label }); // its log line and metrics name the route
    noLocalTier(exchange, route.name, 'none of its tiers is on the local network', []);
    return null;
  }
  return { route, request: parsed.request, rule, bytes: body.bytes };
}

/** The client's own credential, taken once here when a provider of the tier file is sent it (api_key: from_client). */
function credentialOf(req: IncomingMessage, exchange: Exchange, target: RequestTarget): ClientCredential | undefined {
  const { config, codec } = exchange;
  return takesClientCredentials(config) ? captureCredential(req.headers, codec.credential, config.server.auth_token, target.query) : undefined;
}

/** A body without `model` names the default route, when the tier file has one (as LiteLLM and llama.cpp accept). */
function withDefaultModel(body: unknown, config: Config): unknown {
  if (!config.default_route || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const model = (body as { model?: unknown }).model;
  return model === undefined || model === null || model === '' ? { ...body, model: config.default_route } : body;
}

/**
 * The route's token savers (it has some), before the first tier: the body every tier gets (fail-open: a
 * saver that throws or overruns is skipped), and what each saved, measured, for the request's end.
 */
async function saveTokens(
  exchange: Exchange,
  route: Route,
  request: ClientRequest,
  req: IncomingMessage,
  target: RequestTarget,
): Promise<{ request: ClientRequest; savers?: SaverMeasure[] }> {
  // Loaded on use (preloaded by the server for a config with savers): routes without them never load them.
  const { applyRouteSavers } = await import('../savers/route-savers.js');
  const saved = await applyRouteSavers(route, request.protocol, request.body);
  const savers = saved.measures.length > 0 ? saved.measures : undefined;
  if (!saved.changed) return { request, savers };
  const reparsed = exchange.codec.parse(saved.body, req.headers, request.headers.credential, target);
  return { request: reparsed.ok ? reparsed.request : request, savers };
}
