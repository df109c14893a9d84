import type { ClientProtocol } from '../telemetry/events.js';

/** Paths without `/v1` (as LiteLLM and llama.cpp accept; some clients and editors drop it). */
const UNPREFIXED = new Set(['/chat/completions', '/responses', '/messages', '/messages/count_tokens', '/models']);

/** The `/v1` endpoint a path names: un-prefixed aliases get `/v1`, any other path is itself. */
export function endpointPath(path: string): string {
  return UNPREFIXED.has(path) ? `/v1${path}` : path;
}

/** The protocol whose error shape an answer to `path` takes: Anthropic's under /v1/messages, else OpenAI's. */
export function protocolOfPath(path: string): ClientProtocol {
  const endpoint = endpointPath(path);
  if (endpoint.startsWith('/v1/messages')) return 'messages';
  if (endpoint === '/v1/responses') return 'responses';
  return 'chat';
}
