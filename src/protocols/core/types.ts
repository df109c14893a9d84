import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, Tier } from '../../config/schema.js';
import type { Framer } from '../../sse/framer.js';
import type { ClientCredential } from './credential.js';
import type { EmbeddingAsk } from './embedding-ask.js';
import type { AttemptReason, ClientProtocol } from './names.js';
import type { StreamReader } from './event-facts.js';
import type { NeutralRequest, NeutralResponse } from './neutral.js';
import type { Usage } from './usage.js';

/**
 * The two kinds of codec. A *client codec* speaks the protocol a client sent (chat,
 * responses, messages, ollama); a *wire codec* speaks what a tier's server understands (the
 * same four). The routing core sees only the facts a wire codec reads off each event and the
 * bytes an output hands it; it names no protocol. A client codec's own contract, and what it
 * tells other rooms of a request, is in client-codec.ts; an event's facts and the reader that
 * fills them are in event-facts.ts, a stream's way to the client in stream-output.ts.
 */

/** Protocols a tier's server can speak: the client protocols, each relayed to a server that speaks it. */
export type WireProtocol = ClientProtocol;

// ─── upstream requests and answers ──────────────────────────────────────────

/** An upstream request ready to dispatch on the provider's pool. */
export interface UpstreamRequest {
  method: 'POST';
  path: string;
  headers: Record<string, string>;
  body: string;
  /** A tool the request forces whose call is the answer's text (structured output, see answer-tool.ts). */
  answerTool?: string;
  /** A control the client sent that this tier gets without, and why (the request log says it once per tier). */
  dropped?: string;
}

/** Whose fault a non-2xx answer is, decided by the codec that understands the body. */
export interface StatusVerdict {
  reason: AttemptReason;
  /** true: the tier's fault, try the next one; false: the payload's fault, tell the client. */
  failover: boolean;
  /** Worth another try on the same tier (429, 500, 502, 503, 504, 529). */
  retryable: boolean;
  /** The upstream's own words (never the whole body: it may echo the prompt). */
  message: string;
  /** Says nothing about the tier's health (an input this server cannot take). */
  healthNeutral?: boolean;
  /** When the server says to try again, if its body says so (Google's RetryInfo); else the Retry-After header decides. */
  retryAfterMs?: number;
}

/** The upstream's own answer, kept so a payload error can reach the client as it was. */
export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Headers from the client that a wire may pass on (credentials only to a from_client provider). */
export interface ClientHeaders {
  /** The client's own key or login, taken at ingress when the tier file has a from_client provider (core/credential.ts). */
  credential?: ClientCredential;
  anthropicVersion?: string;
  anthropicBeta?: string;
  idempotencyKey?: string;
  /** Every header the client sent: a provider's `forward_headers` picks from them (see headers.ts). */
  incoming?: IncomingHttpHeaders;
}

/** A tier that cannot carry this request (an image URL for Ollama, n > 1 for Anthropic, …). */
export interface Unsupported {
  unsupported: string;
}

export function isUnsupported(value: unknown): value is Unsupported {
  return typeof value === 'object' && value !== null && 'unsupported' in value;
}

// ─── wire codecs ────────────────────────────────────────────────────────────

/** What one kind of server speaks: how to call it and how to read its answers. */
export interface WireCodec {
  readonly protocol: WireProtocol;
  /** Its server signs thinking blocks and refuses thinking another provider signed (Anthropic): a refusal is retried without it. */
  readonly signsThinking?: boolean;
  /** A new incremental framer for this wire's streams (SSE or NDJSON). */
  framer(): Framer;
  /** The request for a body already in this wire's protocol (the client's own, relayed; `endpoint`: the client's path when not the wire's main one). */
  relayRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean, headers: ClientHeaders, endpoint?: string): UpstreamRequest;
  /** The token-count request for a body in this wire's protocol (only Messages has one). */
  countTokensRequest?(provider: Provider, tier: Tier, body: Record<string, unknown>, headers: ClientHeaders): UpstreamRequest;
  /** The request for a neutral one; Unsupported when this wire cannot carry it. */
  encodeRequest(provider: Provider, tier: Tier, request: NeutralRequest, stream: boolean, headers: ClientHeaders): UpstreamRequest | Unsupported;
  /** A new reader of one stream's events (stateful: open blocks, tool-call ids). */
  reader(): StreamReader;
  /** Classifies a non-2xx answer. */
  classifyStatus(status: number, body: string, headers: IncomingHttpHeaders): StatusVerdict;
  /** Usage of a whole answer, found without parsing it; 'not_json' for a body that is not an answer. */
  readUsage(body: Buffer): Usage | undefined | 'not_json';
  /** The upstream's own name for the model, when a stream event names it (its first event, in every protocol). */
  streamModel(event: Record<string, unknown>): string | undefined;
  /** A whole answer as a neutral response; 'not_json' when it is not one. */
  decodeResponse(body: Buffer): NeutralResponse | 'not_json';
}

// ─── client codecs ──────────────────────────────────────────────────────────

/** A client's request after validation: what routing needs, with the body kept for relay. */
export interface ClientRequest {
  readonly protocol: ClientProtocol;
  /** The body as the client sent it (unknown fields kept). */
  readonly body: Record<string, unknown>;
  /** The route the client named. */
  readonly model: string;
  readonly stream: boolean;
  readonly headers: ClientHeaders;
  /** What is asked: an answer, (Messages' count_tokens) only the prompt's token count, or (an embeddings endpoint) vectors. */
  readonly operation?: 'generate' | 'count_tokens' | 'embeddings';
  /** An embeddings request's batch and how its vectors are wanted (docs/embeddings.md). */
  readonly embedding?: EmbeddingAsk;
  /** The tier's path for a relay when the protocol has several (Ollama's `/api/generate` beside `/api/chat`). */
  readonly endpoint?: string;
  /** The content type of its stream when not its codec's (Gemini's stream asked without `alt=sse`: one JSON array). */
  readonly streamType?: string;
  /** The neutral form, made on first use (only a translated tier needs it); a 400 message when it cannot be made. */
  neutral(): NeutralRequest | Unsupported;
}

export type ParseResult = { ok: true; request: ClientRequest } | { ok: false; message: string };

/** Error kinds llm-route itself answers with; each protocol names them its own way. */
export type ErrorKind =
  | 'invalid_request'
  | 'authentication'
  | 'forbidden'
  | 'not_found'
  | 'rate_limit'
  | 'upstream'
  | 'overloaded'
  | 'internal'
  /** Nothing may answer by the request's own terms (a local-only route without a local tier): no retry helps. */
  | 'unavailable';

export interface ErrorSpec {
  status: number;
  kind: ErrorKind;
  /** A stable machine-readable code (OpenAI shapes carry it; others where they can). */
  code: string;
  message: string;
  /** Extra fields inside the error object (e.g. `attempts`). */
  extra?: Record<string, unknown>;
}
