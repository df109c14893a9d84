import type { Provider, Tier } from '../../config/schema.js';
import { SseParser } from '../../sse/parser.js';
import { ANSWER_TOOL } from '../translate/answer-tool.js';
import { classifyStatus } from '../errors/classify-status.js';
import { eventModel, scannedUsage } from '../core/json.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import { withCredential } from '../core/credential.js';
import { capBodyTokens } from '../translate/max-tokens.js';
import type { NeutralRequest } from '../core/neutral.js';
import { upstreamPath } from '../core/paths.js';
import { isUnsupported, type ClientHeaders, type UpstreamRequest, type Unsupported, type WireCodec } from '../core/types.js';
import { mergeUsage, type Usage } from '../core/usage.js';
import { decodeMessagesResponse } from './decode.js';
import { forForeignServer } from './foreign-server.js';
import { messagesFromNeutral } from './from-neutral.js';
import { MessagesReader } from './reader.js';
import { anthropicUsage } from './usage.js';
import { ANTHROPIC_VERSION } from './profile.js';
import { nativelySpeaks } from '../profiles.js';

export { ANTHROPIC_VERSION };

const MAX_TOKENS_FIELDS = ['max_tokens'] as const;

/**
 * Anthropic Messages on the wire: Anthropic itself (`type: anthropic`, `{base_url}/v1/messages`
 * with x-api-key), or an openai-type server that serves it too (`passthrough: [messages]`,
 * `{base_url}/messages` with a Bearer key: Ollama, llama.cpp, vLLM).
 */
export const messagesWire: WireCodec = {
  protocol: 'messages',
  signsThinking: true,
  framer: () => new SseParser(),

  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, headers: ClientHeaders): UpstreamRequest {
    const upstreamBody: Record<string, unknown> = { ...body, model: tier.model };
    if (upstreamBody.max_tokens === undefined) upstreamBody.max_tokens = tier.max_tokens;
    capBodyTokens(upstreamBody, MAX_TOKENS_FIELDS, tier);
    if (!nativelySpeaks(provider, 'messages')) forForeignServer(upstreamBody);
    return messagesRequest(provider, JSON.stringify(upstreamBody), stream, headers);
  },

  countTokensRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, headers: ClientHeaders): UpstreamRequest {
    return messagesRequest(provider, JSON.stringify({ ...body, model: tier.model }), false, headers, '/count_tokens');
  },

  encodeRequest(provider: Provider, tier: Tier, request: NeutralRequest, stream: boolean, headers: ClientHeaders): UpstreamRequest | Unsupported {
    const body = messagesFromNeutral(request, tier, stream);
    if (isUnsupported(body)) return body;
    // anthropic-beta is about Messages features: a translated request asked for none. (A client's
    // own credential still brings the one it needs, e.g. its OAuth beta: see core/credential.ts.)
    const upstream = messagesRequest(provider, JSON.stringify(body), stream, { ...headers, anthropicBeta: undefined });
    if (request.responseFormat && request.responseFormat.type !== 'text') upstream.answerTool = ANSWER_TOOL;
    if (request.reasoningEffort && request.reasoningEffort !== 'none' && body.thinking === undefined) {
      upstream.dropped = `reasoning effort "${request.reasoningEffort}": Anthropic allows no thinking with a forced tool, sampling other than its own, or max_tokens this small`;
    }
    return upstream;
  },

  reader: () => new MessagesReader(),

  classifyStatus,

  readUsage: (body: Buffer): Usage | undefined | 'not_json' =>
    scannedUsage(body, (value) => {
      const piece = anthropicUsage(value);
      return piece ? mergeUsage(undefined, piece) : undefined;
    }),

  // message_start names it: {"type":"message_start","message":{"model":…}}.
  streamModel: (event) => eventModel(event, 'model', 'message'),

  decodeResponse: decodeMessagesResponse,
};

/** The path and credentials of a Messages call, which differ between Anthropic and the servers that imitate it. */
export function messagesRequest(provider: Provider, body: string, stream: boolean, client: ClientHeaders, suffix = ''): UpstreamRequest {
  const headers = baseHeaders(provider, stream, client);
  headers['anthropic-version'] = client.anthropicVersion ?? ANTHROPIC_VERSION;
  if (client.anthropicBeta) headers['anthropic-beta'] = client.anthropicBeta;
  let path: string;
  if (nativelySpeaks(provider, 'messages')) {
    withCredential(headers, provider, client.credential, 'x-api-key');
    path = upstreamPath(provider.base_url, `/v1/messages${suffix}`);
  } else {
    bearerAuth(headers, provider, client);
    path = upstreamPath(provider.base_url, `/messages${suffix}`);
  }
  return { method: 'POST', path, headers, body };
}
