import type { SpaceWidths } from '../state/space-widths.js';
import { AttemptError, timeoutError } from './attempt-error.js';
import type { RoutingRequest } from './routing.js';
import { type UnaryAnswer, UnaryAttempt, type UnaryResult } from './unary-attempt.js';
import { type AttemptInput, clientGone } from './upstream-dispatch.js';

/** A non-streaming attempt: an embeddings batch's (its parts, joined, its width checked), else one whole answer. */
export function wholeAnswerAttempt(
  req: RoutingRequest,
  widths: SpaceWidths,
  input: AttemptInput,
): { readonly elapsedMs: number; readonly result: Promise<UnaryResult> } {
  if (!input.call.embedding) return new UnaryAttempt(input);
  const space = req.route.embedding?.space ?? input.tier.model;
  return new EmbeddingAttempt({ ...input, arrivedAt: req.arrivedAt, route: req.route.name, space, widths });
}

export interface EmbeddingAttemptInput extends AttemptInput {
  /** The request's arrival (performance.now()): an answer in Ollama's shape reports its duration. */
  arrivedAt: number;
  route: string;
  /** The route's vector space, and the width each space answers in. */
  space: string;
  widths: SpaceWidths;
}

/**
 * One embeddings attempt at one tier (docs/embeddings.md): the batch's requests one after the
 * other (one, unless the batch is larger than the tier's max_batch), each a whole answer read as
 * any non-streaming one is, `total_ms` for them all. Their answers become the client's (relayed
 * as their bytes, or decoded and joined in input order); then the answer must hold one vector
 * per input, of the width the client asked for (`dimensions`) or else its space's: the space's
 * first answer fixed it, and an answer of another width is this tier's error
 * (`dimension_mismatch`), never delivered.
 */
export class EmbeddingAttempt {
  readonly result: Promise<UnaryResult>;
  private readonly startedAt = performance.now();
  private current: UnaryAttempt | null = null;
  private timedOut: AttemptError | null = null;
  private readonly totalTimer: NodeJS.Timeout;

  constructor(private readonly input: EmbeddingAttemptInput) {
    this.totalTimer = setTimeout(() => this.expire(), input.tier.timeouts.total_ms);
    this.result = this.run().finally(() => clearTimeout(this.totalTimer));
  }

  get elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  private async run(): Promise<UnaryResult> {
    const { call, tier, pool, client } = this.input;
    const embedding = call.embedding;
    if (!embedding) return failed('bad_response', 'not an embeddings call');
    const { job, parts } = embedding;
    const bodies: Buffer[] = [];
    let contentType = 'application/json';
    // An empty batch asks for nothing: no server is sent it.
    const sent = job.inputs.length === 0 ? [] : parts;
    for (const part of sent) {
      if (this.timedOut) return { ok: false, error: this.timedOut };
      if (client.aborted) return { ok: false, error: clientGone(client, 'connect') };
      this.current = new UnaryAttempt({ tier, call: part, pool, client });
      const result = await this.current.result;
      if (!result.ok) return result;
      bodies.push(result.answer.upstreamBody);
      contentType = result.answer.answer.contentType;
    }
    const answer = job.finish(bodies, contentType, this.input.arrivedAt);
    if ('bad' in answer) return failed('bad_response', answer.bad);
    if (answer.count !== job.inputs.length) return failed('bad_response', `the answer holds ${answer.count} vectors for ${job.inputs.length} inputs`);
    if (answer.count > 0) {
      const mismatch = this.widthMismatch(answer.width);
      if (mismatch) return failed('dimension_mismatch', mismatch);
    }
    const usage = answer.promptTokens === undefined ? undefined : { prompt_tokens: answer.promptTokens, completion_tokens: 0 };
    const unary: UnaryAnswer = {
      answer: { status: 200, contentType: answer.contentType, body: answer.body },
      usage,
      upstreamBody: answer.body,
      embeddings: { width: answer.width, cut: job.cut },
    };
    return { ok: true, answer: unary };
  }

  /** Why vectors of this width are not the space's (the client's `dimensions`, else the width the space's first answer fixed); null when they are. */
  private widthMismatch(width: number): string | null {
    const { call, route, space, widths } = this.input;
    const asked = call.embedding?.job.dimensions;
    if (asked !== undefined) return width === asked ? null : `${width}-wide vectors, where the request asked for dimensions: ${asked}`;
    const agreed = widths.agree(route, space, width);
    return agreed === true ? null : `${width}-wide vectors, where space "${space}" answers ${agreed}-wide ones: another model, not delivered`;
  }

  private expire(): void {
    this.timedOut = timeoutError('total_timeout', this.input.tier.timeouts.total_ms, this.current?.phase() ?? 'connect');
    this.current?.stop(this.timedOut);
  }
}

function failed(reason: 'bad_response' | 'dimension_mismatch', message: string): UnaryResult {
  // The tier answered, and not what a model of this space answers: the next tier of the space may.
  return { ok: false, error: new AttemptError(reason, message, { phase: 'body', failover: true, retryable: false, blame: 'tier' }) };
}
