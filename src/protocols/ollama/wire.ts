import type { Provider, Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import { NdjsonFramer } from '../../sse/ndjson.js';
import { classifyStatus } from '../errors/classify-status.js';
import { bodyObject, eventModel } from '../core/json.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import type { NeutralRequest } from '../core/neutral.js';
import { upstreamPath } from '../core/paths.js';
import { isUnsupported, type ClientHeaders, type UpstreamRequest, type Unsupported, type WireCodec } from '../core/types.js';
import type { Usage } from '../core/usage.js';
import { decodeOllamaResponse } from './decode.js';
import { ollamaFromNeutral } from './from-neutral.js';
import { OllamaReader } from './reader.js';
import { ollamaUsage } from './usage.js';

/**
 * Ollama's native API (`type: ollama`): `POST {base_url}/api/chat`, an NDJSON stream. Unlike
 * its /v1 endpoint it takes `keep_alive` and `options.num_ctx`, so long prompts are not
 * silently cut to the default context.
 */
export const ollamaWire: WireCodec = {
  protocol: 'ollama',
  framer: () => new NdjsonFramer(),

  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, headers: ClientHeaders, endpoint = CHAT): UpstreamRequest {
    return ollamaRequest(provider, endpoint, JSON.stringify(relayedBody(body, tier)), stream, headers);
  },

  encodeRequest(provider: Provider, tier: Tier, request: NeutralRequest, stream: boolean, headers: ClientHeaders): UpstreamRequest | Unsupported {
    const body = ollamaFromNeutral(request, tier, stream);
    return isUnsupported(body) ? body : ollamaRequest(provider, CHAT, JSON.stringify(body), stream, headers);
  },

  reader: () => new OllamaReader(),

  classifyStatus,

  // Ollama's whole answers are small and carry their counts at the top level: parsed.
  readUsage(body: Buffer): Usage | undefined | 'not_json' {
    const answer = bodyObject(body);
    return answer === null ? 'not_json' : ollamaUsage(answer);
  },

  streamModel: (event) => eventModel(event, 'model'),

  decodeResponse: decodeOllamaResponse,
};

const CHAT = '/api/chat';

function ollamaRequest(provider: Provider, endpoint: string, body: string, stream: boolean, client: ClientHeaders): UpstreamRequest {
  const headers = bearerAuth(baseHeaders(provider, stream, client), provider, client);
  headers.accept = stream ? 'application/x-ndjson' : 'application/json';
  return { method: 'POST', path: upstreamPath(provider.base_url, endpoint), headers, body };
}

/**
 * An Ollama client's body for an ollama tier: its `model` the tier's, and the tier's num_ctx
 * (its file's, or the window fit chose for this prompt) and keep_alive where the client set
 * none of its own; everything else as the client sent it.
 */
function relayedBody(body: Record<string, unknown>, tier: Tier): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model: tier.model };
  const options = isRecord(body.options) ? body.options : undefined;
  if (tier.ollama.num_ctx !== undefined && options?.num_ctx === undefined) out.options = { ...options, num_ctx: tier.ollama.num_ctx };
  if (tier.ollama.keep_alive !== undefined && body.keep_alive === undefined) out.keep_alive = tier.ollama.keep_alive;
  return out;
}
