import type { ClientProtocol } from '../telemetry/events.js';

/** The protocol whose error shape an answer to `path` takes: Anthropic's under /v1/messages, else OpenAI's. */
export function protocolOfPath(path: string): ClientProtocol {
  if (path.startsWith('/v1/messages')) return 'messages';
  if (path === '/v1/responses') return 'responses';
  return 'chat';
}
