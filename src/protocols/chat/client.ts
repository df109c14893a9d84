import type { IncomingHttpHeaders } from 'node:http';
import { clientRequest, sessionId } from '../core/client-request.js';
import { type ClientCredential, OPENAI_CREDENTIAL } from '../core/credential.js';
import { openaiErrorBody, openaiRejection } from '../errors/openai-errors.js';
import { RelayOutput } from '../stream-output/relay-output.js';
import { RAW, type RelayHandover, type StreamOutput, type StreamRenderer } from '../core/stream-output.js';
import type { ClientRequest, ParseResult } from '../core/types.js';
import { type EventFacts, EVENT_USAGE_ONLY } from '../core/event-facts.js';
import type { ClientCodec } from '../core/client-codec.js';
import { checkedBody } from '../core/plain-body.js';
import { SSE_TYPE } from '../core/endpoints.js';
import { describeChatConversation } from './conversation.js';
import { ChatRenderer, chatStreamError, renderChatResponse } from './render.js';
import { type ChatIdentity, identityOf } from './tracked-relay.js';
import { ChatBodySchema, isPlainChatBody } from './schema.js';
import { chatMaxTokens, chatToNeutral, tools } from './to-neutral.js';
import { TrackedChatRelay } from './tracked-relay.js';
import { chatAsksThinking, chatHasImages, recognizeChat } from './traits.js';

const DONE = Buffer.from('data: [DONE]\n\n');

/** OpenAI Chat Completions, as clients speak it to llm-route (`POST /v1/chat/completions`). */
export const chatClient: ClientCodec = {
  protocol: 'chat',
  endpoints: [{ path: '/v1/chat/completions', method: 'POST', serves: 'model' }],
  streamType: SSE_TYPE,
  credential: OPENAI_CREDENTIAL,

  parse(body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential): ParseResult {
    const fields = checkedBody(body, ChatBodySchema, isPlainChatBody);
    if (typeof fields === 'string') return { ok: false, message: fields };
    return { ok: true, request: clientRequest('chat', body as Record<string, unknown>, fields, headers, chatToNeutral, credential) };
  },

  errorBody: openaiErrorBody,
  translateRejection: openaiRejection,

  relay(request: ClientRequest): StreamOutput {
    return new ChatRelay(wantsUsage(request));
  },

  renderer(request: ClientRequest, model: string) {
    return new ChatRenderer(model, wantsUsage(request));
  },

  handover(request: ClientRequest, model: string): RelayHandover {
    return new ChatHandover(request, model);
  },

  renderResponse(response, _request, model) {
    return renderChatResponse(response, model);
  },

  // A resume goes on in the same completion: its chunk id, created and model (see tracked-relay.ts).
  resumableRelay: (relay, delivered, renderer) => (renderer instanceof ChatRenderer ? new TrackedChatRelay(relay, delivered, renderer) : null),

  offeredTools: (body) => tools(body.tools),
  choosesNoTool: (body) => body.tool_choice === 'none',
  toolCallIdPrefix: 'call_',
  askedMaxTokens: chatMaxTokens,
  asksThinking: chatAsksThinking,
  hasImages: chatHasImages,
  describeConversation: describeChatConversation,
  recognize: recognizeChat,
  // OpenAI's prompt_cache_key names a conversation (an agent's, or Codex's through chat).
  session: (request) => sessionId(request.body.prompt_cache_key),
};

/**
 * stream_options.include_usage (validated by the parse): the usage-only chunk llm-route always
 * asks for is shown. Read from the body, not kept on the request: every protocol's requests then
 * share one shape, and a request is made without copying one object into another.
 */
function wantsUsage(request: ClientRequest): boolean {
  const options = request.body.stream_options as { include_usage?: unknown } | null | undefined;
  return options?.include_usage === true;
}

/** Chat relayed to a chat server: bytes as they came, minus the usage chunk the client did not ask for. */
class ChatRelay extends RelayOutput {
  constructor(private readonly wantsUsage: boolean) {
    super(DONE, chatStreamError);
  }

  override event(facts: EventFacts): typeof RAW | null {
    return facts.flags & EVENT_USAGE_ONLY && !this.wantsUsage ? null : RAW;
  }
}

/** A relayed Chat stream a renderer takes over: its chunks' id, created and model, its role already sent. */
class ChatHandover implements RelayHandover {
  private identity: ChatIdentity | null = null;

  constructor(
    private readonly request: ClientRequest,
    private readonly model: string,
  ) {}

  relayed(json: unknown): void {
    if (this.identity === null) this.identity = identityOf(json);
  }

  renderer(): StreamRenderer {
    const renderer = new ChatRenderer(this.model, wantsUsage(this.request));
    if (this.identity) renderer.continueAs(this.identity);
    return renderer;
  }
}
