// What an embeddings request asks, as the request carries it (core/types.ts) and the embedding codecs read it (embedding-codec.ts).

/** One input to embed: a text, or (OpenAI) the model's token ids. */
export type EmbeddingInput = string | readonly number[];

/** How vectors are written: JSON numbers, or (OpenAI) base64 of little-endian float32. */
export type VectorEncoding = 'float' | 'base64';

/** What a client asked for, read once from its body at ingress. */
export interface EmbeddingAsk {
  inputs: readonly EmbeddingInput[];
  /** The vectors' width the client asked for (OpenAI and Ollama `dimensions`); undefined: the model's own. */
  dimensions?: number;
  /** How the client wants its vectors written. */
  encoding: VectorEncoding;
  /** An input longer than a tier's window may be cut to fit (Ollama's `truncate`, default true); false: it is a 400. */
  truncate: boolean;
}
