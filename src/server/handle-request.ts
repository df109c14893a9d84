import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAdmin } from '../control/admin-api.js';
import { sendJson } from '../http/respond.js';
import { clientCodecs, matchEndpoint } from '../protocols/registry.js';
import type { ErrorSpec } from '../protocols/core/types.js';
import { type ClientCodec, type ClientEndpoint, PLAIN_TARGET, type RequestTarget } from '../protocols/core/client-codec.js';
import { serveTokenCount } from '../proxy/count-tokens.js';
import { serveModelRequest } from '../proxy/model-request.js';
import { presentsToken } from '../util/bearer.js';
import { correlationUuid } from '../util/correlation-id.js';
import type { AppContext } from '../control/app-context.js';
import { browserRefusal } from './browser-guard.js';
import { answerCors } from './cors.js';
import { healthz } from './healthz.js';
import { serveInfo } from './info-endpoint.js';
import { modelList } from './models-endpoint.js';
import { codecForPath, endpointPath, MODEL_LIST_PATH } from './path-protocol.js';

interface Endpoint {
  /** The methods it answers (HEAD only where named: the GET's answer without its body). */
  methods: readonly string[];
  serve(req: IncomingMessage, res: ServerResponse, app: AppContext, id: string, target: RequestTarget): Promise<void> | void;
}

/** The server's own endpoints, answered where no codec's endpoint claims the request. */
const SERVER_ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map<string, Endpoint>([
  [MODEL_LIST_PATH, { methods: ['GET'], serve: (req, res, app) => sendJson(res, 200, modelList(app, req.headers)) }],
  ['/healthz', { methods: ['GET'], serve: (_req, res, app) => sendJson(res, 200, healthz(app)) }],
  [
    '/metrics',
    {
      methods: ['GET'],
      serve: async (_req, res, app) => {
        const text = await app.metrics.render();
        res.writeHead(200, { 'content-type': app.metrics.contentType });
        res.end(text);
      },
    },
  ],
]);

/** Each endpoint the client codecs name, served in its codec's protocol. */
const CODEC_ENDPOINTS: ReadonlyMap<ClientEndpoint, Endpoint> = new Map(
  clientCodecs().flatMap((codec) => codec.endpoints.map((endpoint): [ClientEndpoint, Endpoint] => [endpoint, codecEndpoint(codec, endpoint)])),
);

function codecEndpoint(codec: ClientCodec, endpoint: ClientEndpoint): Endpoint {
  switch (endpoint.serves) {
    case 'model':
      return { methods: ['POST'], serve: (req, res, app, id, target) => serveModelRequest(req, res, app, endpoint.codec ?? codec, id, target) };
    case 'token_count':
      return { methods: ['POST'], serve: (req, res, app, id, target) => serveTokenCount(req, res, app, codec, endpoint.counting, id, target) };
    case 'info':
      return {
        methods: endpoint.head ? [endpoint.method, 'HEAD'] : [endpoint.method],
        serve: (req, res, app, id, target) => serveInfo(req, res, app, codec, endpoint, id, target),
      };
  }
}

/** The endpoint a request reaches, and what its URL says besides: a codec's that claims it (with that codec), else the server's own. */
function reached(path: string, req: IncomingMessage, query: URLSearchParams): { endpoint: Endpoint; target: RequestTarget; codec?: ClientCodec } | undefined {
  const match = matchEndpoint(path, req.headers, query);
  const target = query === NO_QUERY && match?.model === undefined ? PLAIN_TARGET : { model: match?.model, query };
  if (match) return { endpoint: CODEC_ENDPOINTS.get(match.endpoint) as Endpoint, target, codec: match.codec };
  const own = SERVER_ENDPOINTS.get(path);
  return own && { endpoint: own, target };
}

const NO_QUERY = PLAIN_TARGET.query;

/** Where a client that asked the wrong path is pointed: each protocol's first endpoint for a model. */
const MODEL_PATHS = clientCodecs()
  .map((codec) => codec.endpoints.find((endpoint) => endpoint.serves === 'model')?.path)
  .filter((path): path is string => path !== undefined);

/** Dispatches one HTTP request to its endpoint; never throws. */
export async function handleRequest(req: IncomingMessage, res: ServerResponse, app: AppContext): Promise<void> {
  const id = requestId(req);
  // While draining, answer but let the client know this connection takes no more work.
  if (app.draining) res.setHeader('connection', 'close');
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? NO_QUERY : new URLSearchParams(url.slice(q + 1));
  const found = reached(endpointPath(path), req, query);
  // Errors are shaped in the endpoint's protocol (an unknown path under /v1/messages: Anthropic's);
  // a codec's endpoint was matched once, with its codec.
  const codec = found?.codec ?? codecForPath(path, req.headers, query);
  // Counted from arrival to answer, so a shutdown also waits for requests still uploading.
  app.handling++;
  app.lastArrival = Date.now();
  try {
    // Before anything else, /admin included: a web page gets nothing (browser-guard.ts).
    const refusal = browserRefusal(req, app.config.server);
    if (refusal) return sendError(res, codec, id, refusal);
    if (answerCors(req, res, app.config.server)) return;
    if (path.startsWith('/admin/')) return await handleAdmin(req, res, app, path);
    if (found === undefined) {
      app.telemetry.emit({
        type: 'unknown_endpoint',
        method: req.method ?? '',
        path: path.slice(0, 200),
        userAgent: userAgentOf(req),
        protocol: codec.protocol,
      });
      return sendError(res, codec, id, {
        status: 404,
        kind: 'not_found',
        code: 'not_found',
        message: `no endpoint ${req.method} ${path}; try POST ${MODEL_PATHS.slice(0, -1).join(', ')} or ${MODEL_PATHS.at(-1)}`,
      });
    }
    const { endpoint, target } = found;
    if (!endpoint.methods.includes(req.method ?? '')) {
      const allowed = endpoint.methods.join(', ');
      return sendError(
        res,
        codec,
        id,
        { status: 405, kind: 'invalid_request', code: 'method_not_allowed', message: `${path} accepts ${allowed}, not ${req.method}` },
        { allow: allowed },
      );
    }
    if (path !== '/healthz' && !presentsToken(req, app.config.server.auth_token, query)) {
      const message =
        'missing or wrong token: send Authorization: Bearer <server.auth_token> (or x-api-key / x-goog-api-key / ?key=<server.auth_token>, ' +
        'or x-llm-route-token: <server.auth_token> when those carry your own key)';
      return sendError(res, codec, id, { status: 401, kind: 'authentication', code: 'invalid_api_key', message });
    }
    return await endpoint.serve(req, res, app, id, target);
  } catch (err) {
    // A bug must cost one request, never the server.
    // The path only: a query may carry a key (Gemini's `?key=`).
    process.stderr.write(`llm-route: internal error on ${req.method} ${path}: ${(err as Error).stack ?? err}\n`);
    if (!res.headersSent) sendError(res, codec, id, { status: 500, kind: 'internal', code: 'internal_error', message: 'internal error in llm-route' });
    else res.destroy();
  } finally {
    app.handling--;
  }
}

/**
 * A client that asks before it uploads (`Expect: 100-continue`, curl's way with big bodies):
 * a body over max_body_bytes is refused before it is sent, else the client may go on.
 */
export function answerExpectContinue(req: IncomingMessage, res: ServerResponse, app: AppContext): void {
  const maxBytes = app.config.server.max_body_bytes;
  if (Number(req.headers['content-length']) > maxBytes) {
    const path = (req.url ?? '/').split('?')[0];
    const error = {
      status: 413,
      kind: 'invalid_request',
      code: 'body_too_large',
      message: `request body is larger than max_body_bytes (${maxBytes})`,
    } as const;
    return sendError(res, codecForPath(path), requestId(req), error, { connection: 'close' });
  }
  res.writeContinue();
  void handleRequest(req, res, app);
}

function sendError(res: ServerResponse, codec: ClientCodec, id: string, error: ErrorSpec, headers: Record<string, string> = {}): void {
  const body = codec.errorBody(error);
  // Answered before its body was read: the rest of the upload is not awaited, so the connection
  // cannot carry another request (and a request timeout must not answer it a second time).
  const ending = res.req.complete ? {} : { connection: 'close' };
  res.writeHead(error.status, { ...headers, ...ending, 'x-request-id': id, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The client's user-agent, bounded: it names the client that asked for a path llm-route does not serve. */
function userAgentOf(req: IncomingMessage): string | undefined {
  const agent = req.headers['user-agent'];
  return agent === undefined ? undefined : agent.slice(0, 200);
}

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** The client's x-request-id when it is a sane token, else a new one. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_ID.test(given) ? given : correlationUuid();
}
