import type { Provider, Tier } from '../../config/schema.js';
import { SseParser } from '../../sse/parser.js';
import { isRecord } from '../../util/is-record.js';
import { withCredential } from '../core/credential.js';
import { baseHeaders } from '../core/headers.js';
import type { NeutralRequest } from '../core/neutral.js';
import { isUnsupported, type ClientHeaders, type UpstreamRequest, type Unsupported, type WireCodec } from '../core/types.js';
import { capTokens } from '../translate/max-tokens.js';
import { decodeGeminiResponse, readGeminiUsage } from './decode.js';
import { eventModel } from '../core/json.js';
import { classifyGeminiStatus } from './errors.js';
import { geminiFromNeutral } from './from-neutral.js';
import { generatePath, methodPath, modelResource } from './model-path.js';
import { GeminiReader } from './reader.js';
import { withSignedCalls } from './thought-signatures.js';

/**
 * Gemini's API on the wire (`type: gemini`): `POST {base_url}/v1beta/models/{model}:streamGenerateContent?alt=sse`
 * for a stream (SSE, each `data:` a whole chunk, no terminator), `:generateContent` for a whole
 * answer, `:countTokens`; the key in `x-goog-api-key` (the provider's, or a Gemini client's own
 * for `api_key: from_client`).
 */
export const geminiWire: WireCodec = {
  protocol: 'gemini',
  framer: () => new SseParser(),

  /**
   * A Gemini client's own body: the model is the path's, so the tier's model goes there; the
   * body as sent (its `thoughtSignature`s, `safetySettings`, `cachedContent`), but for the
   * tier's max_tokens cap and the documented signature on a call Gemini did not sign (one
   * another tier made in this conversation).
   */
  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, headers: ClientHeaders): UpstreamRequest {
    return geminiRequest(provider, generatePath(provider, tier, stream), JSON.stringify(relayedBody(body, tier)), stream, headers);
  },

  /** `:countTokens` for a Gemini client's body; a `generateContentRequest` in it names the tier's model, as Gemini wants. */
  countTokensRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, headers: ClientHeaders): UpstreamRequest {
    const inner = body.generateContentRequest;
    const upstream = isRecord(inner) ? { ...body, generateContentRequest: { ...inner, model: modelResource(tier.model) } } : body;
    return geminiRequest(provider, methodPath(provider, tier, 'countTokens'), JSON.stringify(upstream), false, headers);
  },

  encodeRequest(provider: Provider, tier: Tier, request: NeutralRequest, stream: boolean, headers: ClientHeaders): UpstreamRequest | Unsupported {
    const body = geminiFromNeutral(request, tier);
    return isUnsupported(body) ? body : geminiRequest(provider, generatePath(provider, tier, stream), JSON.stringify(body), stream, headers);
  },

  reader: () => new GeminiReader(),
  classifyStatus: classifyGeminiStatus,
  readUsage: readGeminiUsage,
  streamModel: (event) => eventModel(event, 'modelVersion'),
  decodeResponse: decodeGeminiResponse,
};

/** A request to a gemini tier: its key in x-goog-api-key (the provider's, or a Gemini client's own for api_key: from_client). */
export function geminiRequest(provider: Provider, path: string, body: string, stream: boolean, client: ClientHeaders): UpstreamRequest {
  const headers = withCredential(baseHeaders(provider, stream, client), provider, client.credential, 'x-goog-api-key');
  return { method: 'POST', path, headers, body };
}

/** The client's body with its calls signed where Gemini needs it and `maxOutputTokens` within the tier's cap (a copy only where it changed). */
function relayedBody(body: Record<string, unknown>, tier: Tier): Record<string, unknown> {
  let out = body;
  const contents = withSignedCalls(body.contents);
  if (contents !== body.contents) out = { ...out, contents };
  const config = body.generationConfig;
  if (isRecord(config) && typeof config.maxOutputTokens === 'number') {
    const capped = capTokens(config.maxOutputTokens, tier);
    if (capped !== config.maxOutputTokens) out = { ...out, generationConfig: { ...config, maxOutputTokens: capped } };
  }
  return out;
}
