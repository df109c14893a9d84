import type { IncomingHttpHeaders } from 'node:http';
import type { ConversationBuilder, Recognition } from './conversation.js';
import type { ClientCredential, CredentialSpec } from './credential.js';
import type { EmbeddingClient } from './embedding-codec.js';
import type { ModelCatalog } from './endpoints.js';
import type { ClientProtocol } from './names.js';
import type { NeutralResponse, NeutralTool } from './neutral.js';
import type { ClientRequest, ErrorSpec, ParseResult } from './types.js';
import type { PartStage } from './event-facts.js';
import type { RelayHandover, StreamOutput, StreamRenderer } from './stream-output.js';

// The request and error a codec makes, with it: a room that takes a codec finds them here too.
export type { ClientRequest, ErrorSpec } from './types.js';

/**
 * A client protocol as llm-route answers it: where it answers, how it reads a body and writes
 * answers and errors, and what a request in it is (its tools, images, thinking, the savers'
 * view of its body), so that no other room switches on a protocol's name.
 */
export interface ClientCodec {
  readonly protocol: ClientProtocol;
  /** Where it answers (paths are the server's, e.g. `/v1/chat/completions`, or templates naming the route: see endpoint-path.ts). */
  readonly endpoints: readonly ClientEndpoint[];
  /** Unknown paths under this prefix still get this protocol's error shape (Anthropic's under `/v1/messages`). */
  readonly pathPrefix?: string;
  /** The content type of its streams. */
  readonly streamType: string;
  /** Bodies are JSON whatever their content type says (Ollama's server reads them so; its documented curl examples send a form's). */
  readonly anyContentType?: boolean;
  /** The client family rules see for any request in this protocol, when one family speaks it (Ollama's API: `ollama`). */
  readonly client?: 'ollama';
  /** What its clients' own credentials are for and come with (a from_client provider is sent them); absent: its clients' keys are for no provider llm-route sends one to (Ollama's API). */
  readonly credential?: CredentialSpec;
  /** An embeddings endpoint's codec: how it reads a batch and writes vectors (its requests have `operation: 'embeddings'`). */
  readonly embeddings?: EmbeddingClient;
  /**
   * Validates a parsed JSON body (a zod schema that keeps unknown fields); `credential`: the
   * client's, taken at ingress; `target`: what the URL says besides the endpoint (the route a
   * path template named, the query).
   */
  parse(body: unknown, headers: IncomingHttpHeaders, credential?: ClientCredential, target?: RequestTarget): ParseResult;
  /** An error made by llm-route, as a body in this protocol. */
  errorBody(error: ErrorSpec): string;
  /** Shapes a payload-fault answer from a tier in another protocol: its status, its words. */
  translateRejection(status: number, message: string): string;
  /** The relay policy for a stream relayed from a server speaking this same protocol. */
  relay(request: ClientRequest): StreamOutput;
  /**
   * A renderer of stream parts into this protocol, for a stream from another one. `model`: what
   * the answer names as its model, the tier's (a relayed answer names it as the tier wrote it;
   * never the route's name: docs/protocols.md, "Relay or translation").
   */
  renderer(request: ClientRequest, model: string): StreamRenderer;
  /** What a relay of this protocol showed its client, for a renderer to take over in the middle of the answer. */
  handover(request: ClientRequest, model: string): RelayHandover;
  /** A whole neutral answer in this protocol, naming `model` (the tier's). */
  renderResponse(response: NeutralResponse, request: ClientRequest, model: string): string;
  /**
   * The conversation the request belongs to, as its client names it (a header of a known
   * client, else a field of this protocol's body); undefined when it names none. Session
   * affinity keeps a conversation on the tier that has it in its prompt cache.
   */
  session(request: ClientRequest): string | undefined;
  /** A relay a mid-stream resume can carry on in the same message (see ResumableRelay); absent: resumes render from the start. */
  resumableRelay?(relay: StreamOutput, delivered: PartStage, renderer: StreamRenderer): ResumableRelay | null;
  /** Requests that ask only that the model be loaded or unloaded (Ollama's empty prompt): absent, every request asks for an answer. */
  readonly loading?: ModelLoading;

  // What a request is, read off its body as sent (no neutral form made): rules, tool text and savers ask.

  /** The function tools the body offers, as tool text recovers calls to them. */
  offeredTools(body: Record<string, unknown>): NeutralTool[];
  /** The client said no tool may be called (`tool_choice: none`, in this protocol's spelling). */
  choosesNoTool(body: Record<string, unknown>): boolean;
  /** Ids of tool calls llm-route makes in this protocol's style (`toolu_…`, `call_…`). */
  readonly toolCallIdPrefix: string;
  /** The cap on the answer's tokens the body sets, in this protocol's spelling (none: undefined). */
  askedMaxTokens(body: Record<string, unknown>): number | undefined;
  /** The body asks the model to reason. */
  asksThinking(body: Record<string, unknown>): boolean;
  /** An image anywhere in the conversation, tool results included. */
  hasImages(body: Record<string, unknown>): boolean;
  /** The conversation as savers see it, described into `into`; false when the body has none. */
  describeConversation(body: Record<string, unknown>, into: ConversationBuilder): boolean;
  /** Whether a body of unknown protocol is written in this one. */
  recognize(body: Record<string, unknown>): Recognition;
}

/** What a model-load request asks of its server. */
export type LoadAsk = 'load' | 'unload';

/**
 * A protocol in which a request may ask only that the server load its model (or unload it),
 * not answer anything: such a request is no generation. It never enters the routing loop, so
 * it never counts against a tier's health (see proxy/model-load.ts).
 */
export interface ModelLoading {
  /** What the body asks: a load, an unload, or (undefined) an answer like any request. */
  asks(body: Record<string, unknown>): LoadAsk | undefined;
  /** The protocol's answer to it when llm-route answers it itself (no tier that speaks the protocol took it). */
  answer(model: string, done: LoadAsk): Record<string, unknown>;
}

/** A byte relay whose events are also decoded (the text the client has); `carryOn` makes the renderer go on under the relay's ids. */
export interface ResumableRelay extends StreamOutput {
  carryOn(): void;
}

/**
 * The HTTP endpoints a client protocol answers on, named by its codec: the server serves
 * whatever the registered codecs name, so a new protocol brings its paths with it. A `path`
 * may name the route in it (`/v1beta/models/{model}:generateContent`, see endpoint-path.ts).
 */
export type ClientEndpoint = ModelEndpoint | TokenCountEndpoint | InfoEndpoint;

/** What a request's URL says besides its endpoint: the route its path names (a template's `{model}`), and its query. */
export interface RequestTarget {
  readonly model?: string;
  readonly query: URLSearchParams;
}

/** A target with no route in its path and no query. */
export const PLAIN_TARGET: RequestTarget = Object.freeze({ query: new URLSearchParams() });

/** A request for a model: parsed by `codec` (the protocol's own when absent), routed, answered. */
export interface ModelEndpoint {
  readonly path: string;
  readonly method: 'POST';
  readonly serves: 'model';
  readonly codec?: ClientCodec;
}

/** A prompt's token count (Messages' count_tokens): asked of a tier that counts, else llm-route counts itself. */
export interface TokenCountEndpoint {
  readonly path: string;
  readonly method: 'POST';
  readonly serves: 'token_count';
  readonly counting: TokenCounting;
}

/** A client protocol's token-count capability. */
export interface TokenCounting {
  /** The client's request as a token count. */
  asCount(request: ClientRequest): ClientRequest;
  /** llm-route's own count of the prompt, as the protocol's answer. */
  estimate(request: ClientRequest, count: (text: string) => number): unknown;
}

/**
 * An answer llm-route makes itself from what it serves (a model list, a version, a probe's
 * answer, an endpoint it does not offer). `readsBody`: a POST whose JSON body the answer reads.
 */
export interface InfoEndpoint {
  readonly path: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly serves: 'info';
  /**
   * Answers only the requests it claims, on a path another answer serves too (`GET /v1/models`:
   * Gemini's list for a Gemini client, OpenAI's for the rest); absent: every request.
   */
  claims?(headers: IncomingHttpHeaders, query: URLSearchParams): boolean;
  /** Also answered to HEAD, with the GET's status and headers and no body. */
  readonly head?: boolean;
  readonly readsBody?: boolean;
  answer(ask: InfoAsk): InfoAnswer;
}

export interface InfoAsk {
  /** The routes as models, made when asked (most answers need none). */
  catalog(): ModelCatalog;
  /** The request's JSON body, when the endpoint reads one. */
  body: unknown;
  /** The route its path named, and its query. */
  target: RequestTarget;
}

export interface InfoAnswer {
  status: number;
  /** A value to send as JSON, or text to send as it is. */
  json?: unknown;
  text?: string;
}
