import type { IncomingHttpHeaders } from 'node:http';
import type { ClientCodec } from '../core/client-codec.js';
import { clientRequest } from '../core/client-request.js';
import type { ClientCredential } from '../core/credential.js';
import { NDJSON_TYPE } from '../core/endpoints.js';
import type { NeutralRequest } from '../core/neutral.js';
import { checkedBody } from '../core/plain-body.js';
import type { ClientRequest, ErrorSpec, ParseResult, Unsupported } from '../core/types.js';
import { RelayOutput } from '../stream-output/relay-output.js';
import { ollamaInfoEndpoints } from './catalog.js';
import { type OllamaForm, OllamaRenderer, ollamaStreamError, renderOllamaResponse } from './render.js';
import { isPlainOllamaChat, isPlainOllamaGenerate, OllamaChatSchema, OllamaGenerateSchema } from './schema.js';
import { functionTools, ollamaChatToNeutral, ollamaGenerateToNeutral, ollamaMaxTokens } from './to-neutral.js';
import { isRecord } from '../../util/is-record.js';
import { OllamaHandover } from './handover.js';
import { ollamaLoading } from './load.js';
import { TrackedOllamaRelay } from './tracked-relay.js';
import { describeOllamaConversation, ollamaAsksThinking, ollamaHasImages, recognizeOllama } from './traits.js';

/** A request on Ollama's API: when it arrived, for the durations its answer reports. */
interface OllamaRequest extends ClientRequest {
  readonly arrivedAt: number;
}

function arrivedAt(request: ClientRequest): number {
  return (request as Partial<OllamaRequest>).arrivedAt ?? performance.now();
}

/** Ollama's error shape, for errors llm-route makes and for a tier's refusal in another protocol. */
const errorBody = (error: ErrorSpec): string => JSON.stringify({ error: error.message });

/**
 * The codec of one of Ollama's two generation endpoints. Both stream by default (`"stream":
 * false` asks for one object), both relay to an `ollama` tier on the same path.
 */
function ollamaCodec(form: OllamaForm, parse: ClientCodec['parse'], rest: Pick<ClientCodec, 'endpoints' | 'pathPrefix'>): ClientCodec {
  return {
    protocol: 'ollama',
    client: 'ollama',
    anyContentType: true,
    ...rest,
    streamType: NDJSON_TYPE,
    parse,
    errorBody,
    translateRejection: (_status, message) => JSON.stringify({ error: message }),
    // The done line is Ollama's finish and terminator at once: a relay adds nothing after it.
    relay: () => new RelayOutput(null, ollamaStreamError),
    renderer: (request, model) => new OllamaRenderer(model, form, arrivedAt(request)),
    handover: (request, model) => new OllamaHandover(() => new OllamaRenderer(model, form, arrivedAt(request))),
    renderResponse: (response, request, model) => renderOllamaResponse(response, model, form, arrivedAt(request)),
    // A recovery goes on in the same stream under the model the relayed lines named (see tracked-relay.ts).
    resumableRelay: (relay, delivered, renderer) => (renderer instanceof OllamaRenderer ? new TrackedOllamaRelay(relay, delivered, renderer) : null),
    // An empty prompt (no messages) loads the model: answered apart from the routing loop.
    loading: ollamaLoading(form),
    // Ollama's API names no conversation (no id, no cache key): its requests have no session.
    session: () => undefined,
    offeredTools: (body) => functionTools(body.tools),
    // Ollama has no tool_choice.
    choosesNoTool: () => false,
    toolCallIdPrefix: 'call_',
    askedMaxTokens: (body) => (isRecord(body.options) ? ollamaMaxTokens(body.options) : undefined),
    asksThinking: ollamaAsksThinking,
    hasImages: ollamaHasImages,
    describeConversation: describeOllamaConversation,
    recognize: recognizeOllama,
  };
}

/** A parse into an Ollama request: `stream` is true unless the body says false; `endpoint` names a non-chat path for a relay. */
function parser(
  check: (body: unknown) => { model: string; stream?: boolean } | string,
  toNeutral: (body: Record<string, unknown>) => NeutralRequest | Unsupported,
  endpoint?: string,
): ClientCodec['parse'] {
  return (body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential): ParseResult => {
    const fields = check(body);
    if (typeof fields === 'string') return { ok: false, message: fields };
    const request = clientRequest(
      'ollama',
      body as Record<string, unknown>,
      { model: fields.model, stream: fields.stream !== false, endpoint },
      headers,
      toNeutral,
      credential,
    );
    return { ok: true, request: Object.assign(request, { arrivedAt: performance.now() }) };
  };
}

/** Ollama's /api/generate: a prompt (with `system` and `images`), answered in `response`. */
export const ollamaGenerateClient: ClientCodec = ollamaCodec(
  'generate',
  parser((body) => checkedBody(body, OllamaGenerateSchema, isPlainOllamaGenerate), ollamaGenerateToNeutral, '/api/generate'),
  { endpoints: [] },
);

/**
 * Ollama's API, as VS Code's Copilot (its Ollama provider), Open WebUI, Continue, JetBrains AI
 * Assistant and ollama-js speak it: /api/chat and /api/generate routed like every request, and
 * what llm-route answers itself (the probes, the routes as models; 501 for the rest).
 */
export const ollamaClient: ClientCodec = ollamaCodec(
  'chat',
  parser((body) => checkedBody(body, OllamaChatSchema, isPlainOllamaChat), ollamaChatToNeutral),
  {
    endpoints: [
      { path: '/api/chat', method: 'POST', serves: 'model' },
      { path: '/api/generate', method: 'POST', serves: 'model', codec: ollamaGenerateClient },
      ...ollamaInfoEndpoints,
    ],
    pathPrefix: '/api/',
  },
);
