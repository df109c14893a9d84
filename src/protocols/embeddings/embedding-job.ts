import type { Tier } from '../../config/schema.js';
import type { EmbeddingAnswer, EmbeddingClient, EmbeddingInput, EmbeddingWire } from '../core/embedding-codec.js';
import { type ClientRequest, isUnsupported, type Unsupported, type UpstreamRequest } from '../core/types.js';
import { profileOf } from '../profiles.js';
import { embeddingWire } from '../registry.js';
import { joinAnswers, splitBatch } from './batches.js';
import { vectorWidth } from './vectors.js';

/** A batch's answer as the client gets it, with what the routing checks of it. */
export interface JobAnswer {
  body: Buffer;
  contentType: string;
  /** The tokens the tier's server reported reading; undefined when it reported none. */
  promptTokens: number | undefined;
  /** Vectors in the answer, and their width (0 when there are none). */
  count: number;
  width: number;
}

/** One request per this many inputs at most when neither the tier nor its type says. */
const FALLBACK_BATCH = 256;

/**
 * An embeddings request bound to one tier (docs/embeddings.md): its batch as the tier's
 * requests (split by the tier's max_batch, in order), and how their answers become the
 * client's. Relayed when the tier speaks the endpoint's own protocol and one request carries the
 * batch: the answer goes out as its bytes, only scanned (how many vectors, how wide, the
 * tokens). Otherwise each answer is decoded and the client's is written from the vectors, in
 * input order.
 */
export class EmbeddingJob {
  private constructor(
    readonly wire: EmbeddingWire,
    /** One request per part of the batch, in input order (an empty batch's one is never sent: it asks for nothing). */
    readonly requests: readonly UpstreamRequest[],
    /** The tier's server speaks the endpoint's own protocol: its errors reach the client as they came. */
    readonly sameProtocol: boolean,
    /** The answer is passed on as its bytes: the same protocol and answer shape, and one request. */
    readonly relays: boolean,
    private readonly client: EmbeddingClient,
    private readonly request: ClientRequest,
    /** The inputs as the tier is sent them (cut to its window where fit did). */
    readonly inputs: readonly EmbeddingInput[],
  ) {}

  /** The job for `tier` with these inputs (the request's own, or fit's cut of them), or why the tier cannot take it. */
  static plan(tier: Tier, client: EmbeddingClient, request: ClientRequest, inputs: readonly EmbeddingInput[]): EmbeddingJob | Unsupported {
    const ask = request.embedding;
    if (!ask) return { unsupported: 'not an embeddings request' };
    const profile = profileOf(tier.provider);
    const wire = embeddingWire(profile.wire);
    if (!wire || profile.embeddingBatch === undefined) return { unsupported: `a provider of type ${tier.provider.type} has no embeddings API` };
    const parts = splitBatch(inputs, tier.embedding?.max_batch ?? profile.embeddingBatch ?? FALLBACK_BATCH);
    const sameProtocol = client.speaks === wire.protocol;
    const requests: UpstreamRequest[] = [];
    let offset = 0;
    for (const part of parts) {
      const upstream = wire.request(
        tier.provider,
        tier,
        // The client's encoding to a server of its own protocol; numbers to any other (every server writes them).
        { inputs: part, offset, dimensions: ask.dimensions, encoding: sameProtocol ? ask.encoding : 'float', truncate: ask.truncate },
        request.headers,
        sameProtocol ? request.body : undefined,
      );
      if (isUnsupported(upstream)) return upstream;
      requests.push(upstream);
      offset += part.length;
    }
    const relays = sameProtocol && client.relaysAnswer && parts.length === 1;
    return new EmbeddingJob(wire, requests, sameProtocol, relays, client, request, inputs);
  }

  /** The vectors' width the client asked for; undefined: its model's own. */
  get dimensions(): number | undefined {
    return this.request.embedding?.dimensions;
  }

  /** Inputs too long for a tier's window may be cut to fit (the client allowed it). */
  get truncates(): boolean {
    return this.request.embedding?.truncate ?? false;
  }

  /** How many of its inputs fit cut to the tier's window. */
  get cut(): number {
    const asked = this.request.embedding?.inputs ?? [];
    let cut = 0;
    for (let i = 0; i < this.inputs.length; i++) if (this.inputs[i] !== asked[i]) cut++;
    return cut;
  }

  /** The answers of its requests (their bodies, in order) as the client's; a message when one is not an answer. `arrivedAt`: the request's performance.now(). */
  finish(bodies: readonly Buffer[], contentType: string, arrivedAt: number): JobAnswer | { bad: string } {
    if (this.relays && bodies.length === 1) {
      const scan = this.wire.scan(bodies[0]);
      if (scan === 'not_json') return { bad: 'the embeddings answer is not one its server should send' };
      const ask = this.request.embedding;
      // A server that ignored the asked encoding (numbers for base64) is written the client's way.
      if (scan.encoding === ask?.encoding) return { body: bodies[0], contentType, promptTokens: scan.promptTokens, count: scan.count, width: scan.width };
    }
    const answers: EmbeddingAnswer[] = [];
    for (const body of bodies) {
      const answer = this.wire.decode(body);
      if (answer === 'not_json') return { bad: 'the embeddings answer is not one its server should send' };
      answers.push(answer);
    }
    // No answer at all: an empty batch, which no server was asked.
    const joined = answers.length === 0 ? { vectors: [], promptTokens: 0 } : joinAnswers(answers);
    const ask = this.request.embedding as NonNullable<ClientRequest['embedding']>;
    const width = joined.vectors.length === 0 ? 0 : vectorWidth(joined.vectors[0]);
    // Each part's first vector (a server answers one request in one width; its vectors are not parsed to count theirs).
    if (answers.some((part) => part.vectors.length > 0 && vectorWidth(part.vectors[0]) !== width))
      return { bad: 'the embeddings answers hold vectors of different widths' };
    const body = this.client.render(joined, ask, this.request, arrivedAt);
    return { body, contentType: 'application/json', promptTokens: joined.promptTokens, count: joined.vectors.length, width };
  }
}
