import type { ShapedAnswer } from '../protocols/call.js';
import type { StoredAnswer } from '../state/types.js';

// The headers a client's answer goes out with: which request it was, the route and tier that
// answered and after how many attempts (docs/operations.md). As flat lists, the cheapest form
// for node:http on the hot path; an answer of llm-route's own as an object.

/** Which request it was, and the route and tier that answered after how many attempts. */
function routingHeaders(id: string, route: string, tier: string, attempts: number): string[] {
  return ['x-request-id', id, 'x-llm-route-route', route, 'x-llm-route-tier', tier, 'x-llm-route-attempts', String(attempts)];
}

/** A committed stream's head: the routing headers, the time to commit, and a stream's content type. */
export function streamHeaders(id: string, route: string, tier: string, attempts: number, ttftMs: number, contentType: string): string[] {
  const headers = routingHeaders(id, route, tier, attempts);
  headers.push('x-llm-route-ttft-ms', String(Math.round(ttftMs)), 'content-type', contentType, 'cache-control', 'no-cache', 'x-accel-buffering', 'no');
  return headers;
}

/** A whole answer's head (a tier's, or its payload-fault rejection): the routing headers and its body's type and length. */
export function wholeAnswerHeaders(id: string, route: string, tier: string, attempts: number, answer: ShapedAnswer): string[] {
  const headers = routingHeaders(id, route, tier, attempts);
  headers.push('content-type', answer.contentType, 'content-length', String(answer.body.length));
  return headers;
}

/** A stored answer's head as it first went out, marked as replayed under this request's id. */
export function replayHeaders(id: string, answer: StoredAnswer): string[] {
  return [...answer.headers, 'x-request-id', id, 'x-llm-route-replayed', 'true', 'content-length', String(answer.body.length)];
}

/** The headers of an answer of llm-route's own (JSON): the request id, its route once known (null before), then `headers`. */
export function ownHeaders(id: string, route: string | null, headers: Record<string, string | number>, body: string): Record<string, string | number> {
  const routeHeader = route !== null ? { 'x-llm-route-route': route } : null;
  return { 'x-request-id': id, ...routeHeader, ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
}
