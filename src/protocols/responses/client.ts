import type { IncomingHttpHeaders } from 'node:http';
import { isRecord } from '../../util/is-record.js';
import { clientRequest, sessionId } from '../core/client-request.js';
import { type ClientCredential, OPENAI_CREDENTIAL } from '../core/credential.js';
import { RelayOutput } from '../stream-output/relay-output.js';
import { openaiErrorBody, openaiRejection } from '../errors/openai-errors.js';
import { isUnsupported, type ClientRequest, type ParseResult } from '../core/types.js';
import { RAW } from '../core/stream-output.js';
import type { EventFacts } from '../core/event-facts.js';
import type { ClientCodec } from '../core/client-codec.js';
import { checkedBody } from '../core/plain-body.js';
import { SSE_TYPE } from '../core/endpoints.js';
import { describeResponsesConversation } from './conversation.js';
import { ResponsesHandover } from './handover.js';
import { ResponsesRenderer } from './render.js';
import { renderResponsesResponse } from './render-response.js';
import { isPlainResponsesBody, ResponsesBodySchema } from './schema.js';
import { responsesMaxTokens, responsesToNeutral } from './to-neutral.js';
import { recognizeResponses, responsesAsksThinking, responsesHasImages, responsesTools } from './traits.js';

/** OpenAI Responses, as Codex CLI and newer SDKs speak it to llm-route (`POST /v1/responses`). */
export const responsesClient: ClientCodec = {
  protocol: 'responses',
  endpoints: [{ path: '/v1/responses', method: 'POST', serves: 'model' }],
  streamType: SSE_TYPE,
  credential: OPENAI_CREDENTIAL,

  parse(body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential): ParseResult {
    const fields = checkedBody(body, ResponsesBodySchema, isPlainResponsesBody);
    if (typeof fields === 'string') return { ok: false, message: fields };
    return { ok: true, request: clientRequest('responses', body as Record<string, unknown>, fields, headers, responsesToNeutral, credential) };
  },

  errorBody: openaiErrorBody,
  translateRejection: openaiRejection,
  relay: () => new ResponsesRelay(),
  renderer: (request, model) => new ResponsesRenderer(model, toolNamespaces(request)),
  handover: (request, model) => new ResponsesHandover(() => new ResponsesRenderer(model, toolNamespaces(request))),
  renderResponse: (response, request, model) => renderResponsesResponse(response, model, toolNamespaces(request)),

  offeredTools: responsesTools,
  choosesNoTool: (body) => body.tool_choice === 'none',
  toolCallIdPrefix: 'call_',
  askedMaxTokens: responsesMaxTokens,
  asksThinking: responsesAsksThinking,
  hasImages: responsesHasImages,
  describeConversation: describeResponsesConversation,
  recognize: recognizeResponses,
  // Codex names its conversation in a session_id header, and as prompt_cache_key.
  session: (request) => sessionId(request.headers.incoming?.session_id, request.body.prompt_cache_key),
};

/** The namespace of each namespaced tool the client offered (Codex groups its tools). */
function toolNamespaces(request: ClientRequest): Map<string, string> {
  const neutral = request.neutral();
  const namespaces = new Map<string, string>();
  if (!isUnsupported(neutral)) for (const tool of neutral.tools) if (tool.namespace) namespaces.set(tool.name, tool.namespace);
  return namespaces;
}

/**
 * Responses relayed to a server that serves Responses: events as they came; its own error
 * event numbered after them. response.completed and response.incomplete are the finish and
 * the terminator at once: there is no tail to add.
 */
class ResponsesRelay extends RelayOutput {
  private lastSequence = -1;

  constructor() {
    super(null, (message) => {
      const event = { type: 'error', sequence_number: this.lastSequence + 1, code: 'stream_interrupted', message: `llm-route: ${message}`, param: null };
      return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
    });
  }

  override event(facts: EventFacts): typeof RAW {
    const json = facts.json;
    if (isRecord(json) && typeof json.sequence_number === 'number') this.lastSequence = json.sequence_number;
    return RAW;
  }
}
