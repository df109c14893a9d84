import type { IncomingHttpHeaders } from 'node:http';
import { clientHeaders } from '../client-headers.js';
import { memoize } from '../memoize.js';
import { RAW, type ClientCodec, type ClientRequest, type ParseResult, type StreamOutput } from '../types.js';
import { zodProblem } from '../zod-problem.js';
import { anthropicErrorBody, anthropicRejection } from './errors.js';
import { MessagesRenderer, renderMessagesResponse, sse } from './render.js';
import { MessagesBodySchema } from './schema.js';
import { messagesStreamError } from './stream-error.js';
import { messagesToNeutral } from './to-neutral.js';

const MESSAGE_STOP = Buffer.from(sse('message_stop', { type: 'message_stop' }));

/** Anthropic Messages, as Claude Code and the Anthropic SDKs speak it to llm-route (`POST /v1/messages`). */
export const messagesClient: ClientCodec = {
  protocol: 'messages',

  parse(body: unknown, headers: IncomingHttpHeaders): ParseResult {
    const parsed = MessagesBodySchema.safeParse(body);
    if (!parsed.success) return { ok: false, message: zodProblem(parsed.error) };
    const raw = body as Record<string, unknown>;
    const request: ClientRequest = {
      protocol: 'messages',
      body: raw,
      model: parsed.data.model,
      stream: parsed.data.stream === true,
      headers: clientHeaders(headers),
      neutral: memoize(() => messagesToNeutral(raw)),
    };
    return { ok: true, request };
  },

  errorBody: anthropicErrorBody,
  translateRejection: anthropicRejection,
  relay: () => new MessagesRelay(),
  renderer: (request) => new MessagesRenderer(request.model),
  renderResponse: (response, request) => renderMessagesResponse(response, request.model),
};

/** Messages relayed to a server that speaks Messages: the events as they came. */
class MessagesRelay implements StreamOutput {
  readonly relays = true;

  event(): typeof RAW {
    return RAW;
  }

  keepAlive(raw: Buffer): Buffer {
    return raw;
  }

  /** A stream that stopped (message_delta with its stop_reason) and then ended without message_stop gets one. */
  complete(terminated: boolean): Buffer | null {
    return terminated ? null : MESSAGE_STOP;
  }

  upstreamError(raw: Buffer): Buffer {
    return raw;
  }

  interrupted(message: string): Buffer {
    return Buffer.from(messagesStreamError(message));
  }
}
