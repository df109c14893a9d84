import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ServerConfig } from '../config/schema.js';

/** The headers a page can read from an answer: llm-route's own, and Retry-After for a 429/503. */
const EXPOSED = 'x-request-id, x-llm-route-route, x-llm-route-tier, x-llm-route-attempts, x-llm-route-ttft-ms, x-llm-route-replayed, retry-after';
/** Allowed when a preflight names none: what the OpenAI and Anthropic browser SDKs send besides x-stainless-*. */
const DEFAULT_ALLOWED =
  'authorization, content-type, x-api-key, anthropic-version, anthropic-beta, anthropic-dangerous-direct-browser-access, openai-organization, openai-project, idempotency-key, x-request-id, x-llm-route-token';
/** A list of header names, as Access-Control-Request-Headers carries it (anything else is not echoed). */
const HEADER_LIST = /^[\w-]+(?:[ \t]*,[ \t]*[\w-]+)*$/;

/**
 * CORS for server.cors_origins (browserRefusal has refused any other Origin already). A preflight
 * (OPTIONS with an allowed Origin) is answered here with 204: true. Other requests from an
 * allowed Origin get Access-Control-Allow-Origin on whatever answer follows. With any origin
 * listed, every answer varies by Origin (a cache must not hand one origin's answer to another).
 */
export function answerCors(req: IncomingMessage, res: ServerResponse, server: ServerConfig): boolean {
  if (server.cors_origins.length === 0) return false;
  res.setHeader('vary', 'origin');
  const origin = req.headers.origin;
  if (origin === undefined || !server.cors_origins.includes(origin)) return false;
  res.setHeader('access-control-allow-origin', origin);
  if (req.method !== 'OPTIONS') {
    res.setHeader('access-control-expose-headers', EXPOSED);
    return false;
  }
  // The SDKs add headers of their own (x-stainless-*, new ones each release): the ones a
  // preflight asks for are allowed, since this origin is trusted with everything anyway.
  const asked = req.headers['access-control-request-headers'];
  res.writeHead(204, {
    'access-control-allow-methods': 'GET, POST, PUT, DELETE',
    'access-control-allow-headers': typeof asked === 'string' && HEADER_LIST.test(asked) ? asked : DEFAULT_ALLOWED,
    'access-control-max-age': '600',
  });
  res.end();
  return true;
}
