import type { IncomingHttpHeaders } from 'node:http';
import { promptEstimate } from '../core/prompt-tokens.js';
import { isRecord } from '../../util/is-record.js';
import { clientRequest, sessionId } from '../core/client-request.js';
import type { ClientCredential, CredentialSpec } from '../core/credential.js';
import { checkedBody } from '../core/plain-body.js';
import { RelayOutput } from '../stream-output/relay-output.js';
import type { ClientRequest, ParseResult } from '../core/types.js';
import type { ClientCodec } from '../core/client-codec.js';
import { SSE_TYPE } from '../core/endpoints.js';
import { describeMessagesConversation } from './conversation.js';
import { messagesTokenCounting } from './count-tokens.js';
import { anthropicErrorBody, anthropicRejection } from './errors.js';
import { MessagesHandover } from './handover.js';
import { MessagesRenderer, messagesStreamError, renderMessagesResponse, sse } from './render.js';
import { isPlainMessagesBody, MessagesBodySchema } from './schema.js';
import { messagesMaxTokens, messagesToNeutral } from './to-neutral.js';
import { messagesAsksThinking, messagesChoosesNoTool, messagesHasImages, messagesTools, recognizeMessages } from './traits.js';

/** Each request's prompt counted once, however many attempts render a message_start for it. */
const estimates = new WeakMap<ClientRequest, number>();

function inputEstimate(request: ClientRequest): number {
  let tokens = estimates.get(request);
  if (tokens === undefined) estimates.set(request, (tokens = promptEstimate(request)));
  return tokens;
}

/**
 * Anthropic's clients: an API key in x-api-key, or a login's OAuth token in Authorization
 * (Claude Code with a subscription), whose anthropic-beta carries what that login needs
 * (`oauth-2025-04-20`).
 */
const ANTHROPIC_CREDENTIAL: CredentialSpec = {
  api: 'anthropic',
  companions: ['anthropic-beta'],
  advice: "log in to Claude Code (/login), or set ANTHROPIC_API_KEY (the SDK's apiKey) to your own Anthropic key",
};

const MESSAGE_STOP = Buffer.from(sse('message_stop', { type: 'message_stop' }));

/** Anthropic Messages, as Claude Code and the Anthropic SDKs speak it to llm-route (`POST /v1/messages`). */
export const messagesClient: ClientCodec = {
  protocol: 'messages',
  endpoints: [
    { path: '/v1/messages', method: 'POST', serves: 'model' },
    { path: '/v1/messages/count_tokens', method: 'POST', serves: 'token_count', counting: messagesTokenCounting },
  ],
  pathPrefix: '/v1/messages',
  streamType: SSE_TYPE,
  credential: ANTHROPIC_CREDENTIAL,

  parse(body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential): ParseResult {
    const fields = checkedBody(body, MessagesBodySchema, isPlainMessagesBody);
    if (typeof fields === 'string') return { ok: false, message: fields };
    return { ok: true, request: clientRequest('messages', body as Record<string, unknown>, fields, headers, messagesToNeutral, credential) };
  },

  errorBody: anthropicErrorBody,
  translateRejection: anthropicRejection,
  // A stream that stopped (message_delta with its stop_reason) and ended without message_stop gets one.
  relay: () => new RelayOutput(MESSAGE_STOP, messagesStreamError),
  renderer: (request, model) => new MessagesRenderer(model, () => inputEstimate(request)),
  handover: (request, model) => new MessagesHandover(() => new MessagesRenderer(model, () => inputEstimate(request))),
  renderResponse: (response, _request, model) => renderMessagesResponse(response, model),

  offeredTools: messagesTools,
  choosesNoTool: messagesChoosesNoTool,
  toolCallIdPrefix: 'toolu_',
  askedMaxTokens: messagesMaxTokens,
  asksThinking: messagesAsksThinking,
  hasImages: messagesHasImages,
  describeConversation: describeMessagesConversation,
  recognize: recognizeMessages,
  // Claude Code names its session in a header, and in metadata.user_id (its device, account and session ids).
  session: (request) =>
    sessionId(request.headers.incoming?.['x-claude-code-session-id'], isRecord(request.body.metadata) ? request.body.metadata.user_id : undefined),
};
