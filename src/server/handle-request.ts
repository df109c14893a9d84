import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAdmin } from '../control/admin-api.js';
import { sendJson } from '../http/respond.js';
import { clientCodec } from '../protocols/core/registry.js';
import type { ClientCodec, ErrorSpec } from '../protocols/core/types.js';
import { messagesTokenCount } from '../protocols/messages/count-tokens.js';
import { serveTokenCount } from '../proxy/count-tokens.js';
import { serveModelRequest } from '../proxy/model-request.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { presentsToken } from '../util/bearer.js';
import { correlationUuid } from '../util/correlation-id.js';
import type { AppContext } from '../control/app-context.js';
import { browserRefusal } from './browser-guard.js';
import { answerCors } from './cors.js';
import { healthz } from './healthz.js';
import { modelList } from './model-list.js';
import { endpointPath, protocolOfPath } from './path-protocol.js';

interface Endpoint {
  method: 'GET' | 'POST';
  /** The protocol its errors are shaped in (OpenAI's when none). */
  protocol?: ClientProtocol;
  serve(req: IncomingMessage, res: ServerResponse, app: AppContext, id: string): Promise<void> | void;
}

const ENDPOINTS: Record<string, Endpoint> = {
  '/v1/chat/completions': { method: 'POST', protocol: 'chat', serve: (req, res, app, id) => serveModelRequest(req, res, app, clientCodec('chat'), id) },
  '/v1/responses': { method: 'POST', protocol: 'responses', serve: (req, res, app, id) => serveModelRequest(req, res, app, clientCodec('responses'), id) },
  '/v1/messages': { method: 'POST', protocol: 'messages', serve: (req, res, app, id) => serveModelRequest(req, res, app, clientCodec('messages'), id) },
  '/v1/messages/count_tokens': { method: 'POST', protocol: 'messages', serve: (req, res, app, id) => serveTokenCount(req, res, app, messagesTokenCount, id) },
  '/v1/models': { method: 'GET', serve: (req, res, app) => sendJson(res, 200, modelList(app, req.headers)) },
  '/healthz': { method: 'GET', serve: (_req, res, app) => sendJson(res, 200, healthz(app)) },
  '/metrics': {
    method: 'GET',
    serve: async (_req, res, app) => {
      const text = await app.metrics.render();
      res.writeHead(200, { 'content-type': app.metrics.contentType });
      res.end(text);
    },
  },
};

/** Dispatches one HTTP request to its endpoint; never throws. */
export async function handleRequest(req: IncomingMessage, res: ServerResponse, app: AppContext): Promise<void> {
  const id = requestId(req);
  // While draining, answer but let the client know this connection takes no more work.
  if (app.draining) res.setHeader('connection', 'close');
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const endpoint = ENDPOINTS[endpointPath(path)];
  // Errors are shaped in the endpoint's protocol (an unknown path under /v1/messages: Anthropic's).
  const codec = clientCodec(endpoint?.protocol ?? protocolOfPath(path));
  // Counted from arrival to answer, so a shutdown also waits for requests still uploading.
  app.handling++;
  app.lastArrival = Date.now();
  try {
    // Before anything else, /admin included: a web page gets nothing (browser-guard.ts).
    const refusal = browserRefusal(req, app.config.server);
    if (refusal) return sendError(res, codec, id, refusal);
    if (answerCors(req, res, app.config.server)) return;
    if (path.startsWith('/admin/')) return await handleAdmin(req, res, app, path);
    if (endpoint === undefined) {
      return sendError(res, codec, id, {
        status: 404,
        kind: 'not_found',
        code: 'not_found',
        message: `no endpoint ${req.method} ${path}; try POST /v1/chat/completions, /v1/responses or /v1/messages`,
      });
    }
    if (req.method !== endpoint.method) {
      return sendError(
        res,
        codec,
        id,
        { status: 405, kind: 'invalid_request', code: 'method_not_allowed', message: `${path} accepts ${endpoint.method}, not ${req.method}` },
        { allow: endpoint.method },
      );
    }
    if (path !== '/healthz' && !presentsToken(req, app.config.server.auth_token)) {
      const message =
        'missing or wrong token: send Authorization: Bearer <server.auth_token> (or x-api-key: <server.auth_token>, ' +
        'or x-llm-route-token: <server.auth_token> when Authorization carries your own key)';
      return sendError(res, codec, id, { status: 401, kind: 'authentication', code: 'invalid_api_key', message });
    }
    return await endpoint.serve(req, res, app, id);
  } catch (err) {
    // A bug must cost one request, never the server.
    process.stderr.write(`llm-route: internal error on ${req.method} ${req.url}: ${(err as Error).stack ?? err}\n`);
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
    return sendError(res, clientCodec(protocolOfPath(path)), requestId(req), error, { connection: 'close' });
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

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** The client's x-request-id when it is a sane token, else a new one. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_ID.test(given) ? given : correlationUuid();
}
