import type { Provider, Tier } from '../../config/schema.js';
import type { EmbeddingAsk, EmbeddingInput, VectorEncoding } from './embedding-ask.js';
import type { ClientRequest, ClientHeaders, Unsupported, UpstreamRequest, WireProtocol } from './types.js';

export type { EmbeddingAsk, EmbeddingInput, VectorEncoding };

/**
 * Embeddings, beside the chat codecs (docs/embeddings.md): an *embedding client* reads a
 * client's batch of inputs and writes a whole answer in its protocol; an *embedding wire*
 * writes one batch as its server's request and reads its answer, with or without decoding
 * the vectors. A protocol's embeddings are one file in its folder (a ProtocolEmbeddings) and
 * one line of the registry (`EMBEDDINGS`), which serves its endpoints with the protocol's own
 * errors (a ModelEndpoint whose codec has `embeddings`). Answers are whole: there is no stream.
 */

/**
 * One vector as an answer carried it: numbers, float32s, or not decoded (yet): the bytes of the
 * JSON array of numbers its server wrote (a view of its answer), or base64. A vector is decoded
 * only when the client wants it written another way.
 */
export type Vector = readonly number[] | Float32Array | { base64: string } | { json: Buffer };

/** A whole answer, decoded: its vectors in input order, and the tokens its server read. */
export interface EmbeddingAnswer {
  vectors: Vector[];
  /** The prompt tokens the server reported; undefined when it reported none. */
  promptTokens: number | undefined;
  /** The model its server named. */
  model?: string;
}

/** What a relayed answer holds, read off its bytes without decoding a vector. */
export interface VectorScan {
  /** Vectors in the answer. */
  count: number;
  /** The first vector's width (0 when there is none). */
  width: number;
  /** How its vectors are written. */
  encoding: VectorEncoding;
  promptTokens: number | undefined;
}

/** One request's worth of a batch, as a tier is sent it. */
export interface EmbeddingPart {
  inputs: readonly EmbeddingInput[];
  /** Where its inputs start in the client's batch (what a relayed body's own per-input fields are found by: Gemini's requests). */
  offset: number;
  dimensions?: number;
  /** The encoding to ask the tier for (the client's when relayed; else what the wire reads best). */
  encoding: VectorEncoding;
  truncate: boolean;
}

/** A protocol's embeddings as llm-route answers them (one per endpoint: Ollama and Gemini have two). */
export interface EmbeddingClient {
  /**
   * The wire this endpoint's body is: a tier whose server speaks it is sent the client's own
   * body (but for the model and the inputs) and its errors reach the client as they came;
   * undefined: none (Ollama's older /api/embeddings, whose body no server takes).
   */
  readonly speaks?: WireProtocol;
  /**
   * Its answer is that wire's own answer: one request's answer that carries the whole batch,
   * written as asked, is passed on as its bytes. False: its answer has a shape of its own
   * (Gemini's embedContent: one `embedding`), written from the vectors (their bytes, unparsed).
   */
  readonly relaysAnswer: boolean;
  /** The ask in a client's body (`route`: the route it names, in the body or the path), or a message for its 400. */
  read(body: Record<string, unknown>, route: string): EmbeddingAsk | string;
  /** A whole answer in this protocol, from decoded vectors (a translation, or a batch split and joined); `arrivedAt`: the request's performance.now(). */
  render(answer: EmbeddingAnswer, ask: EmbeddingAsk, request: ClientRequest, arrivedAt: number): Buffer;
}

/** A path a protocol's clients send batches to, and how it reads and answers them. */
export interface EmbeddingEndpoint {
  readonly path: string;
  readonly client: EmbeddingClient;
}

/**
 * A protocol's embeddings, registered on one line (`EMBEDDINGS` in registry.ts): the endpoints
 * its clients send batches to (each served with the protocol's errors) and its servers' side.
 */
export interface ProtocolEmbeddings {
  readonly endpoints: readonly EmbeddingEndpoint[];
  readonly wire: EmbeddingWire;
}

/** What a kind of server speaks for embeddings. */
export interface EmbeddingWire {
  readonly protocol: WireProtocol;
  /**
   * One part of a batch as this server's request; `relayBody`: the client's own body, when it
   * speaks this wire (kept but for the model and the inputs). Unsupported when this server cannot
   * take it (token ids on a server that takes texts only).
   */
  request(provider: Provider, tier: Tier, part: EmbeddingPart, headers: ClientHeaders, relayBody?: Record<string, unknown>): UpstreamRequest | Unsupported;
  /** A whole answer's facts, read off its bytes: its vectors are not decoded. 'not_json' when it is no answer of this wire. */
  scan(body: Buffer): VectorScan | 'not_json';
  /** A whole answer, its vectors decoded in input order; 'not_json' when it is no answer of this wire. */
  decode(body: Buffer): EmbeddingAnswer | 'not_json';
}
