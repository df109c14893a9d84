import type { IncomingHttpHeaders } from 'node:http';
import { codecOfPath, servesPath } from '../protocols/registry.js';
import type { ClientCodec } from '../protocols/core/client-codec.js';

/** The OpenAI-style model list, the one `/v1` endpoint that is the server's own rather than a codec's. */
export const MODEL_LIST_PATH = '/v1/models';

/**
 * The endpoint a path names: an un-prefixed alias of a `/v1` endpoint gets `/v1` (as LiteLLM and
 * llama.cpp accept; some clients and editors drop it), any other path is itself.
 */
export function endpointPath(path: string): string {
  if (path.startsWith('/v1/')) return path;
  const prefixed = `/v1${path}`;
  return prefixed === MODEL_LIST_PATH || servesPath(prefixed) ? prefixed : path;
}

/** The client codec whose error shape an answer to `path` takes (Anthropic's under /v1/messages, Gemini's under /v1beta, OpenAI's where no protocol owns the path). */
export function codecForPath(path: string, headers?: IncomingHttpHeaders, query?: URLSearchParams): ClientCodec {
  return codecOfPath(endpointPath(path), headers, query);
}
