import type { IncomingHttpHeaders } from 'node:http';
import type { ShapedAnswer } from '../protocols/call.js';
import type { Usage } from '../protocols/core/usage.js';
import type { AnswerFacts } from '../protocols/core/neutral.js';
import { AttemptError, type Phase, timeoutError } from './attempt-error.js';
import { badToolCall } from './stream-errors.js';
import { type AnswerReader, type AttemptInput, UpstreamDispatch } from './upstream-dispatch.js';

/** A whole non-streaming answer, shaped for the client: the commit point is its last byte. */
export interface UnaryAnswer {
  answer: ShapedAnswer;
  usage: Usage | undefined;
  /** The upstream's body as it came (its text is counted when it reported no usage). */
  upstreamBody: Buffer;
  /** What the answer says of itself (its model, its finish), worked out when asked (traces). */
  facts?: () => AnswerFacts;
  /** An embeddings answer: its vectors' width, and how many inputs were cut to the tier's window. */
  embeddings?: { width: number; cut: number };
}

export type UnaryResult = { ok: true; answer: UnaryAnswer } | { ok: false; error: AttemptError };

/**
 * A non-streaming attempt: `total_ms` for the whole response (the dispatch's timer), `idle_ms`
 * between body bytes once the body has begun. A body cut short fails the attempt, so the next
 * tier can answer.
 */
export class UnaryAttempt implements AnswerReader {
  readonly result: Promise<UnaryResult>;
  private resolveResult!: (result: UnaryResult) => void;
  private status = 0;
  private contentType = 'application/json';
  private chunks: Buffer[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly dispatch: UpstreamDispatch;

  constructor(private readonly input: AttemptInput) {
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.dispatch = new UpstreamDispatch(input, this);
    this.dispatch.start();
  }

  get elapsedMs(): number {
    return this.dispatch.elapsedMs;
  }

  onHeaders(status: number, headers: IncomingHttpHeaders): void {
    this.status = status;
    const type = headers['content-type'];
    if (typeof type === 'string') this.contentType = type;
  }

  onBody(chunk: Buffer): void {
    this.chunks.push(chunk);
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(UnaryAttempt.idleExpired, this.input.tier.timeouts.idle_ms, this);
  }

  onEnd(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    // Relayed, the body goes out as it came and only its usage is read (without parsing it).
    const last = this.input.lastTier;
    const shaped = this.input.call.unaryAnswer(this.status, this.contentType, body, last?.isLast);
    // A tool call the client cannot run, on a tier that may be the last: asked again once that is known.
    if (shaped === 'undecided') return void last?.settled().then(() => this.dispatch.live && this.onEnd());
    if (shaped === 'not_json') {
      return this.stop(new AttemptError('bad_response', 'upstream answered with a body that is not JSON', { phase: 'body', failover: true, retryable: false }));
    }
    if ('badToolCall' in shaped) return this.stop(badToolCall(shaped.badToolCall));
    this.settle({ ok: true, answer: { answer: shaped.answer, usage: shaped.usage, upstreamBody: body, facts: shaped.facts } });
  }

  onBroken(err: AttemptError): void {
    this.stop(err);
  }

  stop(err: AttemptError): void {
    if (!this.dispatch.live) return;
    this.dispatch.cancel(err);
    this.settle({ ok: false, error: err });
  }

  onClientGone(err: AttemptError): void {
    this.stop(err);
  }

  phase(): Phase {
    if (this.chunks.length > 0) return 'body';
    return this.dispatch.connected ? 'headers' : 'connect';
  }

  private settle(result: UnaryResult): void {
    this.dispatch.finish();
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.resolveResult(result);
  }

  private static idleExpired(attempt: UnaryAttempt): void {
    attempt.stop(timeoutError('idle_timeout', attempt.input.tier.timeouts.idle_ms, 'body'));
  }
}
