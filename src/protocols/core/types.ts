import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, Tier } from '../../config/schema.js';
import type { Framer } from '../../sse/framer.js';
import type { ClientCredential } from './credential.js';
import type { EmbeddingAsk } from './embedding-ask.js';
import type { AttemptReason, ClientProtocol } from './names.js';
import type { AnswerFacts, NeutralRequest, NeutralResponse } from './neutral.js';
import type { StreamPart } from './stream-part.js';
import type { Usage } from './usage.js';

/**
 * The two kinds of codec. A *client codec* speaks the protocol a client sent (chat,
 * responses, messages, ollama); a *wire codec* speaks what a tier's server understands (the
 * same four). The routing core sees only the facts a wire codec reads off each event and the
 * bytes an output hands it; it names no protocol. A client codec's own contract, and what it
 * tells other rooms of a request, is in client-codec.ts.
 */

/** Protocols a tier's server can speak: the client protocols, each relayed to a server that speaks it. */
export type WireProtocol = ClientProtocol;

// ─── facts of one upstream event ────────────────────────────────────────────

/**
 * What one upstream event means to the router, and its parts for a translation; filled in
 * place by the stream's reader (one facts object and one parts array per stream; the parts
 * themselves are new small objects).
 */
export interface EventFacts {
  /** Bit set of EVENT_* flags. */
  flags: number;
  /** Usage figures this event carries (a piece of them, for protocols that report in pieces). */
  usage: Partial<Usage> | undefined;
  /** Generated text in this event (content, reasoning, tool arguments), for a token estimate. */
  text: string | undefined;
  /** The event's parsed JSON (a relay policy reads a field of it: a sequence number, a chunk id). */
  json: unknown;
  /**
   * The event's parts, decoded once by the stream's reader; the flags above are read from them.
   * The reader's own array, reused for the next event: copy what must outlive this one.
   */
  parts: readonly StreamPart[];
}

export const EVENT_CONTENT = 1; // commits the stream: text, reasoning, a tool call, a finish or opaque content (see part-facts.ts)
export const EVENT_FINISH = 2; // the answer's end reason
export const EVENT_USAGE = 4; // carries usage
export const EVENT_USAGE_ONLY = 8; // nothing but usage (chat: hidden from clients that did not ask)
export const EVENT_ERROR = 16; // an error reported inside the stream
export const EVENT_MALFORMED = 32; // not valid JSON, or not an event of the protocol
export const EVENT_DONE = 64; // the protocol's terminator: nothing meaningful follows
export const EVENT_REWRITTEN = 128; // its parts are not what the upstream's bytes say (a tool call recovered from text): a relay renders from here on
export const EVENT_BAD_TOOL_CALL = 256; // with EVENT_ERROR: a tool call written as text that the client cannot run (src/protocols/tool-text/)
export const EVENT_HELD = 512; // after commit, its text is held back undecided (it may begin a tool call written as text): a relay waits for the next event
export const EVENT_PROGRESS = 1024; // the upstream's event carried content as it came (set with EVENT_CONTENT, kept when a tool-text hold takes the content back): the stream is not silent; a keep-alive never is

const NO_PARTS: readonly StreamPart[] = Object.freeze([]);

export function newFacts(): EventFacts {
  return { flags: 0, usage: undefined, text: undefined, json: undefined, parts: NO_PARTS };
}

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
  /** A whole answer relayed as its bytes: its model and finish, read off them (never parsed). */
  answerFacts(body: Buffer): AnswerFacts;
  /** The upstream's own name for the model, when a stream event names it (its first event, in every protocol). */
  streamModel(event: Record<string, unknown>): string | undefined;
  /** A whole answer as a neutral response; 'not_json' when it is not one. */
  decodeResponse(body: Buffer): NeutralResponse | 'not_json';
}

/**
 * Reads one stream's events, each once: its data into parts (`facts.parts`), and the commit
 * facts from those parts (flags, usage, text), so what commits a stream and what a translation
 * renders cannot disagree. A relayed stream is read the same way and still goes out as its bytes.
 */
export interface StreamReader {
  read(data: string, facts: EventFacts): void;
  /**
   * A reader that holds content before commit (a tool call written as text, see tool-text/),
   * told that the TTFT budget ended while it held no form: 'released', the reasoning or
   * whitespace it held is in `facts` as one event, to commit now; null: nothing held.
   */
  ttftEnded?(facts: EventFacts): 'released' | null;
  /** Characters of a tool call written as text it holds now (0: none): while one grows, its hold is governed by progress, not by ttft_ms. */
  heldForm?(): number;
  /**
   * The hold of a form was cut (`why`: idle_ms of silence, stream_max_ms, the answer cap):
   * `badCall`, why the attempt fails; 'released' on the last tier the request tries, the text
   * as written in `facts` as one event, to commit now.
   */
  holdEnded?(facts: EventFacts, why: string): { badCall: string } | 'released';
  /** A form the client cannot run waits to know whether the tier is the last the request tries (its fit check is still counting). */
  awaitsLastTier?(): boolean;
  /** That is known now: `badCall`, fail over; 'released', the text as written in `facts`, to commit; null: nothing waited. */
  lastTierKnown?(facts: EventFacts): { badCall: string } | 'released' | null;
}

/**
 * A step between a stream's parts and its renderer (the answer tool turned into text, a
 * resume's echo dropped): appends what it makes of one read event to `out`. `readParts` is
 * the first step of every chain: the event's own parts of choice 0, the only one a
 * translation carries.
 */
export interface PartStage {
  decode(facts: EventFacts, out: StreamPart[]): void;
}

export const readParts: PartStage = {
  decode(facts: EventFacts, out: StreamPart[]): void {
    const parts = facts.parts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (!('choice' in part) || !part.choice) out.push(part);
    }
  },
};

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

/**
 * Renders one stream's parts in a client protocol, closing blocks at their ends (state:
 * the open block, tool-call ids, usage). It is given choice 0's parts only (see readParts).
 */
export interface StreamRenderer {
  /** The client bytes for these parts ('' for none). The protocol's opening comes with the first content. */
  render(parts: readonly StreamPart[]): string;
  /** The answer is complete: what closes it (the finish, usage, the terminator). */
  end(): string;
  /** The stream cannot go on: this protocol's error event. */
  error(message: string): string;
}

/**
 * A same-protocol stream a renderer may have to go on with in the middle of the answer (a tool
 * call written as text after text already relayed, see tool-text/): told each event that went
 * out as its bytes, it keeps what the client saw of ids, open blocks, indexes and sequence
 * numbers, and makes a renderer that carries on from there, as if it had drawn the whole stream.
 */
export interface RelayHandover {
  /** One event that reached the client as its upstream bytes: its parsed JSON and its parts. */
  relayed(json: unknown, parts: readonly StreamPart[]): void;
  /** A renderer that goes on where the relayed bytes left the client. */
  renderer(): StreamRenderer;
}

/** A special return of StreamOutput.event: forward the event's own upstream bytes. */
export const RAW = Symbol('raw');

/**
 * How one committed stream's upstream events reach the client: relayed as their bytes, or
 * rendered in the client's protocol. Before commit the attempt holds what this returns.
 */
export interface StreamOutput {
  /** Whether events reach the client as their own bytes (the byte relay). */
  readonly relays: boolean;
  /** What the client gets for one read, well-formed event (`raw`: its upstream bytes): RAW, bytes, or null (nothing). */
  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null;
  /** A comment or field-less event (keep-alive), after commit: its bytes, or null. */
  keepAlive(raw: Buffer): Buffer | null;
  /** The answer is complete (`terminated`: the upstream sent its terminator): what ends the client's stream well. */
  complete(terminated: boolean): Buffer | null;
  /** The upstream reported an error after commit: the client's last event (the upstream's own when relayed). */
  upstreamError(raw: Buffer, facts: EventFacts): Buffer;
  /** The stream cannot go on (a stall, a break): the client protocol's error event. */
  interrupted(message: string): Buffer;
}
