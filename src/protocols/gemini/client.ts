import type { IncomingHttpHeaders } from 'node:http';
import { GOOGLE_KEY_HEADER, GOOGLE_KEY_PARAM } from '../../util/bearer.js';
import { isRecord } from '../../util/is-record.js';
import type { ClientCodec, ClientEndpoint, RequestTarget } from '../core/client-codec.js';
import { clientRequest } from '../core/client-request.js';
import type { ClientCredential, CredentialSpec } from '../core/credential.js';
import { SSE_TYPE } from '../core/endpoints.js';
import { checkedBody } from '../core/plain-body.js';
import type { ClientRequest, ParseResult } from '../core/types.js';
import { geminiCatalogEndpoints } from './catalog.js';
import { geminiTokenCounting } from './count-tokens.js';
import { geminiErrorBody, geminiRejection } from './error-body.js';
import { JSON_TYPE } from './frames.js';
import { geminiAsksThinking, geminiMaxTokens, showsThoughts } from './generation.js';
import { GeminiHandover, TrackedGeminiRelay } from './handover.js';
import { geminiRelay } from './relay.js';
import { type AnswerShape, GeminiRenderer, renderGeminiResponse } from './render.js';
import { GeminiBodySchema, generationOf, isPlainGeminiBody } from './schema.js';
import { geminiToNeutral } from './to-neutral.js';
import { geminiChoosesNoTool, geminiTools } from './tools.js';
import { describeGeminiConversation, geminiHasImages, recognizeGemini } from './traits.js';

/** A request on Gemini's API: what its answers show (read once, at parse). */
interface GeminiRequest extends ClientRequest {
  readonly shape: AnswerShape;
}

const SSE_SHAPE: AnswerShape = { sse: true, thoughts: false, ids: false };

function shapeOf(request: ClientRequest): AnswerShape {
  return (request as Partial<GeminiRequest>).shape ?? SSE_SHAPE;
}

/** Gemini's clients: an API key in x-goog-api-key, or in the URL's `?key=` (sent on in the header). */
const GEMINI_CREDENTIAL: CredentialSpec = {
  api: 'gemini',
  companions: [],
  advice: "set GEMINI_API_KEY (the SDK's apiKey) to your own Gemini API key",
  keyIn: { header: GOOGLE_KEY_HEADER, query: GOOGLE_KEY_PARAM },
};

/** A parse for one of the generation endpoints: the route is the model in the path; streaming is the endpoint's, not the body's. */
function parser(stream: boolean): ClientCodec['parse'] {
  return (body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential, target?: RequestTarget): ParseResult => {
    if (target?.model === undefined) return { ok: false, message: 'the model is named in the path: POST /v1beta/models/{model}:generateContent' };
    const sent = body as Record<string, unknown>;
    const checked = checkedBody(isRecord(body) ? generationOf(sent) : body, GeminiBodySchema, isPlainGeminiBody);
    if (typeof checked === 'string') return { ok: false, message: checked };
    const sse = !stream || target.query.get('alt') === 'sse';
    const request = clientRequest('gemini', sent, { model: target.model, stream }, headers, geminiToNeutral, credential);
    const shape: AnswerShape = { sse, thoughts: showsThoughts(checked), ids: sendsCallIds(checked.contents) };
    return { ok: true, request: Object.assign(request, sse ? { shape } : { shape, streamType: JSON_TYPE }) };
  };
}

/** The client's function calls or responses carry ids (Gemini CLI's do, from its second turn). */
function sendsCallIds(contents: readonly unknown[]): boolean {
  for (const content of contents) {
    if (!isRecord(content) || !Array.isArray(content.parts)) continue;
    for (const part of content.parts) {
      if (!isRecord(part)) continue;
      if (hasId(part.functionCall) || hasId(part.functionResponse)) return true;
    }
  }
  return false;
}

function hasId(value: unknown): boolean {
  return isRecord(value) && typeof value.id === 'string' && value.id !== '';
}

/** The codec of one generation endpoint: `:generateContent` (one answer) or `:streamGenerateContent` (a stream). */
function geminiCodec(stream: boolean, endpoints: readonly ClientEndpoint[]): ClientCodec {
  return {
    protocol: 'gemini',
    endpoints,
    pathPrefix: '/v1beta/',
    streamType: SSE_TYPE,
    credential: GEMINI_CREDENTIAL,
    parse: parser(stream),
    errorBody: geminiErrorBody,
    translateRejection: geminiRejection,
    relay: (request) => geminiRelay(shapeOf(request).sse),
    // modelVersion names the tier's model that answered, as a relayed answer's does (docs/protocols.md).
    renderer: (request, model) => new GeminiRenderer(model, shapeOf(request)),
    handover: (request, model) => new GeminiHandover(() => new GeminiRenderer(model, shapeOf(request))),
    renderResponse: (response, request, model) => renderGeminiResponse(response, model, shapeOf(request)),
    // A recovery goes on in the same stream under the response id the relayed chunks named (see handover.ts).
    resumableRelay: (relay, delivered, renderer) => (renderer instanceof GeminiRenderer ? new TrackedGeminiRelay(relay, delivered, renderer) : null),
    // Gemini's API names no conversation (no id, no cache key), and Gemini CLI sends none in a header.
    session: () => undefined,
    offeredTools: (body) => geminiTools(generationOf(body)),
    choosesNoTool: (body) => geminiChoosesNoTool(generationOf(body)),
    toolCallIdPrefix: 'call_',
    askedMaxTokens: (body) => geminiMaxTokens(generationOf(body)),
    asksThinking: (body) => geminiAsksThinking(generationOf(body)),
    hasImages: geminiHasImages,
    describeConversation: describeGeminiConversation,
    recognize: recognizeGemini,
  };
}

/** `:streamGenerateContent`: SSE with `alt=sse` (as Gemini CLI and @google/genai ask), else one JSON array written as it grows. */
const geminiStreamClient: ClientCodec = geminiCodec(true, []);

/**
 * Gemini's API, as Gemini CLI and apps on @google/genai speak it, under /v1beta and /v1: the
 * route is the model in the path; generation and token counts are routed like every request,
 * the model list and a model's own path answered from the routes.
 */
export const geminiClient: ClientCodec = geminiCodec(
  false,
  (['/v1beta', '/v1'] as const).flatMap((version): ClientEndpoint[] => [
    { path: `${version}/models/{model}:generateContent`, method: 'POST', serves: 'model' },
    { path: `${version}/models/{model}:streamGenerateContent`, method: 'POST', serves: 'model', codec: geminiStreamClient },
    { path: `${version}/models/{model}:countTokens`, method: 'POST', serves: 'token_count', counting: geminiTokenCounting },
    ...geminiCatalogEndpoints(version),
  ]),
);
