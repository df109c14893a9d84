import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppContext } from './app-context.js';
import { isJsonType, readBody } from '../http/read-body.js';
import { sendError, sendJson } from '../http/respond.js';
import { hasBearer, presentsToken } from '../util/bearer.js';
import { decodeSegment } from '../util/decode-segment.js';
import { isLoopbackHost } from '../util/loopback.js';
import { applyAlerts } from './alerts.js';
import { routesView } from './routes-view.js';
import type { DayTotals } from '../usage/store.js';

const MAX_ADMIN_BODY = 1024 * 1024;
const TIER_PATH = /^\/admin\/routes\/([^/]+)\/tiers\/([^/]+)$/;
const SESSION_PATH = /^\/admin\/sessions\/([^/]+)$/;

/**
 * The admin API under /admin: routes and their tiers (GET), runtime weight overrides
 * (PUT/DELETE), reload (POST), Alertmanager webhooks (POST). Loopback only, unless
 * server.admin_token is set: then the token is required from anywhere.
 */
export async function handleAdmin(req: IncomingMessage, res: ServerResponse, app: AppContext, path: string): Promise<void> {
  const session = SESSION_PATH.exec(path);
  const denied = session && readsOwnSession(req, app) ? null : accessDenied(req, app.config.server.admin_token);
  if (denied) return sendError(res, denied.status, denied.message, 'invalid_request_error', denied.code);
  // JSON only: a web page's "simple" request (text/plain, a form) could otherwise switch a tier off.
  const type = req.headers['content-type'];
  if ((type !== undefined || carriesBody(req)) && !isJsonType(type ?? '')) {
    const message = `admin API bodies must be content-type: application/json${type === undefined ? '' : `, got "${type}"`}`;
    return sendError(res, 415, message, 'invalid_request_error', 'unsupported_media_type', {}, { connection: 'close' });
  }

  if (path === '/admin/routes') {
    if (req.method !== 'GET') return methodNotAllowed(res, path, 'GET');
    return sendJson(res, 200, routesView(app));
  }
  if (path === '/admin/reload') {
    if (req.method !== 'POST') return methodNotAllowed(res, path, 'POST');
    const result = app.reload();
    if (result.ok) return sendJson(res, 200, { ok: true, file: result.config.file, routes: [...result.config.routes.keys()] });
    return sendError(
      res,
      400,
      `the tier file has problems; the running config is unchanged:\n${result.problems.join('\n')}`,
      'invalid_request_error',
      'invalid_config',
      { problems: result.problems },
    );
  }
  if (path === '/admin/alerts') {
    if (req.method !== 'POST') return methodNotAllowed(res, path, 'POST');
    const body = await readJson(req);
    if (!body.ok) return badBody(res, body);
    const outcome = applyAlerts(body.value, app);
    if (!outcome.ok) return sendError(res, 400, outcome.message, 'invalid_request_error', 'invalid_alert_payload');
    return sendJson(res, 200, outcome.result);
  }
  if (session) {
    if (req.method !== 'GET') return methodNotAllowed(res, path, 'GET');
    const today = await app.usageToday();
    return sendJson(res, 200, { ...app.sessions.summary(decodeSegment(session[1]), app.config), today: today && todayView(today) });
  }
  const match = TIER_PATH.exec(path);
  if (match) return handleTierOverride(req, res, app, decodeSegment(match[1]), decodeSegment(match[2]));
  sendError(res, 404, `no admin endpoint ${req.method} ${path}; try GET /admin/routes`, 'invalid_request_error', 'not_found');
}

async function handleTierOverride(req: IncomingMessage, res: ServerResponse, app: AppContext, route: string, tier: string): Promise<void> {
  if (req.method !== 'PUT' && req.method !== 'DELETE') return methodNotAllowed(res, req.url ?? '', 'PUT, DELETE');
  const known = app.config.routes.get(route);
  if (!known)
    return sendError(res, 404, `unknown route "${route}" (known: ${[...app.config.routes.keys()].join(', ')})`, 'invalid_request_error', 'route_not_found');
  if (!known.tiers.some((t) => t.name === tier)) {
    return sendError(
      res,
      404,
      `route "${route}" has no tier "${tier}" (tiers: ${known.tiers.map((t) => t.name).join(', ')})`,
      'invalid_request_error',
      'tier_not_found',
    );
  }
  if (req.method === 'DELETE') {
    app.weights.clear(route, tier);
    return sendJson(res, 200, { route, tier, weight: app.weights.view(route, tier) });
  }
  const body = await readJson(req);
  if (!body.ok) return badBody(res, body);
  const parsed = parseOverride(body.value);
  if (typeof parsed === 'string') return sendError(res, 400, parsed, 'invalid_request_error', 'invalid_override');
  app.weights.setOverride(route, tier, parsed.weight, parsed.ttl_s);
  sendJson(res, 200, { route, tier, weight: app.weights.view(route, tier) });
}

/** `{"weight": 0..100, "ttl_s"?: > 0}`, or the reason it is not. */
function parseOverride(value: unknown): { weight: number; ttl_s?: number } | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected a JSON object like {"weight": 25, "ttl_s": 600}';
  const { weight, ttl_s, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0)
    return `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}: expected "weight" and optionally "ttl_s"`;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0 || weight > 100)
    return '"weight" must be a number from 0 to 100 (0 switches the tier off)';
  if (ttl_s === undefined || ttl_s === null) return { weight };
  if (typeof ttl_s !== 'number' || !Number.isFinite(ttl_s) || ttl_s <= 0) return '"ttl_s" must be a positive number of seconds';
  return { weight, ttl_s };
}

type BadBody = { ok: false; status: 400 | 408 | 413; message: string };

async function readJson(req: IncomingMessage): Promise<{ ok: true; value: unknown } | BadBody> {
  const raw = await readBody(req, MAX_ADMIN_BODY);
  if (raw === 'too_large') return { ok: false, status: 413, message: `body larger than ${MAX_ADMIN_BODY} bytes` };
  if (raw === 'client_gone') return { ok: false, status: 400, message: 'the body was cut off' };
  if (raw === 'timeout') return { ok: false, status: 408, message: 'the body did not arrive within server.request_timeout_ms' };
  try {
    return { ok: true, value: JSON.parse(raw.toString('utf8')) };
  } catch (err) {
    return { ok: false, status: 400, message: `body is not valid JSON: ${(err as Error).message}` };
  }
}

/** A body too large or too slow also ends the connection (what is left of it is not read), as on the model endpoints. */
function badBody(res: ServerResponse, body: BadBody): void {
  const code = body.status === 413 ? 'body_too_large' : body.status === 408 ? 'request_timeout' : 'invalid_body';
  sendError(res, body.status, body.message, 'invalid_request_error', code, {}, body.status === 400 ? {} : { connection: 'close' });
}

function carriesBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * A session's summary is about the client's own requests: whoever may send the proxy a request
 * may read it (its auth_token, or anyone when none is set, as on the model endpoints), as well
 * as whoever may use the admin API. `llm-route statusline` under `exec` has the client's token.
 */
function readsOwnSession(req: IncomingMessage, app: AppContext): boolean {
  return req.method === 'GET' && presentsToken(req, app.config.server.auth_token);
}

function todayView(today: DayTotals): Record<string, number> {
  return { requests: today.requests, prompt_tokens: today.promptTokens, completion_tokens: today.completionTokens, cost_usd: today.costUsd };
}

function accessDenied(req: IncomingMessage, adminToken: string | undefined): { status: number; code: string; message: string } | null {
  if (adminToken) {
    if (hasBearer(req, adminToken)) return null;
    return { status: 401, code: 'invalid_admin_token', message: 'admin API: send Authorization: Bearer <server.admin_token>' };
  }
  if (isLoopbackHost(req.socket.remoteAddress ?? '')) return null;
  return { status: 403, code: 'admin_loopback_only', message: 'admin API is allowed from loopback only; set server.admin_token to use it from elsewhere' };
}

function methodNotAllowed(res: ServerResponse, path: string, allowed: string): void {
  sendError(res, 405, `${path} accepts ${allowed}`, 'invalid_request_error', 'method_not_allowed', {}, { allow: allowed });
}
