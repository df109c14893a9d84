import type { Provider, Tier } from '../../config/schema.js';
import { SseParser } from '../../sse/parser.js';
import { classifyStatus } from '../errors/classify-status.js';
import { eventModel, scannedUsage } from '../core/json.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import { capBodyTokens } from '../translate/max-tokens.js';
import { upstreamPath } from '../core/paths.js';
import type { ClientHeaders, UpstreamRequest, Unsupported, WireCodec } from '../core/types.js';
import type { Usage } from '../core/usage.js';
import { decodeResponsesResponse } from './decode.js';
import { ResponsesReader } from './reader.js';
import { responsesUsage } from './usage.js';

const MAX_TOKENS_FIELDS = ['max_output_tokens'] as const;

/**
 * OpenAI Responses on the wire: an openai-type server that serves it itself (`passthrough:
 * [responses]`: OpenAI, recent Ollama, llama.cpp, vLLM, LM Studio) at `{base_url}/responses`.
 * Requests in it are only ever relayed; other protocols reach such a server as Chat Completions.
 */
export const responsesWire: WireCodec = {
  protocol: 'responses',
  framer: () => new SseParser(),

  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, client: ClientHeaders): UpstreamRequest {
    const headers = bearerAuth(baseHeaders(provider, stream, client), provider, client);
    const upstreamBody: Record<string, unknown> = { ...body, model: tier.model };
    capBodyTokens(upstreamBody, MAX_TOKENS_FIELDS, tier);
    return { method: 'POST', path: upstreamPath(provider.base_url, '/responses'), headers, body: JSON.stringify(upstreamBody) };
  },

  encodeRequest(): Unsupported {
    return { unsupported: 'llm-route relays Responses requests to this tier; other protocols reach it as Chat Completions' };
  },

  reader: () => new ResponsesReader(),

  classifyStatus,

  readUsage: (body: Buffer): Usage | undefined | 'not_json' => scannedUsage(body, responsesUsage),

  // response.created names it: {"type":"response.created","response":{"model":…}}.
  streamModel: (event) => eventModel(event, 'model', 'response'),

  decodeResponse: decodeResponsesResponse,
};
