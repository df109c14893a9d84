import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from './app-context.js';
import { handleAdmin } from '../control/admin-api.js';
import { hasBearer } from '../util/bearer.js';
import { clientCodec } from '../protocols/registry.js';
import { serveModelRequest } from '../proxy/model-request.js';
import { healthz } from './healthz.js';
import { sendError, sendJson } from '../http/respond.js';

const ENDPOINTS: Record<string, string> = {
  '/v1/chat/completions': 'POST',
  '/v1/models': 'GET',
  '/healthz': 'GET',
  '/metrics': 'GET',
};

/** Dispatches one HTTP request to its endpoint; never throws. */
export async function handleRequest(req: IncomingMessage, res: ServerResponse, app: AppContext): Promise<void> {
  const id = requestId(req);
  // While draining, answer but let the client know this connection takes no more work.
  if (app.draining) res.setHeader('connection', 'close');
  try {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path.startsWith('/admin/')) return await handleAdmin(req, res, app, path);
    const method = ENDPOINTS[path];
    if (method === undefined) {
      return sendError(res, 404, `no endpoint ${req.method} ${path}; try POST /v1/chat/completions`, 'invalid_request_error', 'not_found', {}, { 'x-request-id': id });
    }
    if (req.method !== method) {
      return sendError(res, 405, `${path} accepts ${method}, not ${req.method}`, 'invalid_request_error', 'method_not_allowed', {}, { allow: method, 'x-request-id': id });
    }
    if (path !== '/healthz' && !authorized(req, app.config.server.auth_token)) {
      return sendError(res, 401, 'missing or wrong bearer token: send Authorization: Bearer <server.auth_token>', 'invalid_request_error', 'invalid_api_key', {}, { 'x-request-id': id });
    }
    switch (path) {
      case '/v1/chat/completions':
        return await serveModelRequest(req, res, app, clientCodec('chat'), id);
      case '/v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: [...app.config.routes.keys()].map((name) => ({ id: name, object: 'model', created: Math.floor(app.startedAt / 1000), owned_by: 'llm-route' })),
        });
      case '/healthz':
        return sendJson(res, 200, healthz(app));
      case '/metrics': {
        const text = await app.metrics.render();
        res.writeHead(200, { 'content-type': app.metrics.contentType });
        res.end(text);
        return;
      }
    }
  } catch (err) {
    // A bug must cost one request, never the server.
    process.stderr.write(`llm-route: internal error on ${req.method} ${req.url}: ${(err as Error).stack ?? err}\n`);
    if (!res.headersSent) sendError(res, 500, 'internal error in llm-route', 'internal_error', 'internal_error', {}, { 'x-request-id': id });
    else res.destroy();
  }
}

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** The client's x-request-id when it is a sane token, else a new one. */
function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_ID.test(given) ? given : randomUUID();
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  return !token || hasBearer(req, token);
}
