import type { Provider, Tier } from '../../config/schema.js';
import { SseParser } from '../../sse/parser.js';
import { isRecord } from '../../util/is-record.js';
import { classifyStatus } from '../errors/classify-status.js';
import { eventModel, scannedField, scannedUsage } from '../core/json.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import { capBodyTokens } from '../translate/max-tokens.js';
import type { NeutralRequest } from '../core/neutral.js';
import { upstreamPath } from '../core/paths.js';
import { isUnsupported, type ClientHeaders, type UpstreamRequest, type Unsupported, type WireCodec } from '../core/types.js';
import type { Usage } from '../core/usage.js';
import { decodeChatResponse } from './decode.js';
import { chatFromNeutral } from './from-neutral.js';
import { ChatReader } from './reader.js';
import { chatUsage, withTimings } from './usage.js';

const MAX_TOKENS_FIELDS = ['max_tokens', 'max_completion_tokens'] as const;
const TIMINGS = Buffer.from('"timings"');

/** OpenAI Chat Completions on the wire: OpenAI, Ollama /v1, vLLM, llama.cpp, LM Studio, … */
export const chatWire: WireCodec = {
  protocol: 'chat',
  framer: () => new SseParser(),

  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, headers: ClientHeaders): UpstreamRequest {
    const upstreamBody: Record<string, unknown> = { ...body, model: tier.model };
    if (stream) {
      // Always ask for usage: accounting needs it; the relay hides the chunk from clients that did not ask.
      const options = isRecord(body.stream_options) ? body.stream_options : {};
      upstreamBody.stream_options = { ...options, include_usage: true };
    }
    capBodyTokens(upstreamBody, MAX_TOKENS_FIELDS, tier);
    return chatRequest(provider, JSON.stringify(upstreamBody), stream, headers);
  },

  encodeRequest(provider: Provider, tier: Tier, request: NeutralRequest, stream: boolean, headers: ClientHeaders): UpstreamRequest | Unsupported {
    const body = chatFromNeutral(request, provider, tier, stream);
    return isUnsupported(body) ? body : chatRequest(provider, JSON.stringify(body), stream, headers);
  },

  reader: () => new ChatReader(),

  classifyStatus,

  readUsage(body: Buffer): Usage | undefined | 'not_json' {
    const usage = scannedUsage(body, chatUsage);
    if (usage === 'not_json' || usage?.cached_tokens !== undefined) return usage;
    // No cached figure in the usage: a llama.cpp build without prompt_tokens_details has it in `timings`.
    const timings = scannedField(body, TIMINGS);
    return timings === undefined ? usage : withTimings(usage, timings);
  },

  streamModel: (event) => eventModel(event, 'model'),

  decodeResponse: decodeChatResponse,
};

function chatRequest(provider: Provider, body: string, stream: boolean, client: ClientHeaders): UpstreamRequest {
  const headers = bearerAuth(baseHeaders(provider, stream, client), provider, client);
  return { method: 'POST', path: upstreamPath(provider.base_url, '/chat/completions'), headers, body };
}
