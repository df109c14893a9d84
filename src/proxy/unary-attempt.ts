import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { ShapedAnswer } from '../protocols/call.js';
import type { Usage } from '../protocols/usage.js';
import { AttemptError, timeoutError } from './attempt-error.js';
import { type AttemptInput, UpstreamAttempt } from './upstream-attempt.js';

type Controller = Dispatcher.DispatchController;

/** A whole non-streaming answer, shaped for the client: the commit point is its last byte. */
export interface UnaryAnswer {
  answer: ShapedAnswer;
  usage: Usage | undefined;
  /** The upstream's body as it came (its text is counted when it reported no usage). */
  upstreamBody: Buffer;
}

export type UnaryResult = { ok: true; answer: UnaryAnswer } | { ok: false; error: AttemptError };

/**
 * A non-streaming attempt: `total_ms` for the whole response, `idle_ms` between body bytes
 * once the body has begun. A body cut short fails the attempt, so the next tier can answer.
 */
export class UnaryAttempt extends UpstreamAttempt {
  readonly result: Promise<UnaryResult>;
  private resolveResult!: (result: UnaryResult) => void;
  private status = 0;
  private contentType = 'application/json';
  private chunks: Buffer[] = [];
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;

  constructor(input: AttemptInput) {
    super(input);
    this.result = new Promise((resolve) => (this.resolveResult = resolve));
    this.totalTimer = setTimeout(this.onTotalTimeout, input.tier.timeouts.total_ms);
    this.dispatch();
  }

  protected onSuccessHeaders(_c: Controller, status: number, headers: IncomingHttpHeaders): void {
    this.status = status;
    const type = headers['content-type'];
    if (typeof type === 'string') this.contentType = type;
  }

  protected onBody(_c: Controller, chunk: Buffer): void {
    this.chunks.push(chunk);
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(this.onIdleTimeout, this.input.tier.timeouts.idle_ms);
  }

  protected onEnd(): void {
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    // Relayed, the body goes out as it came and only its usage is read (without parsing it).
    const shaped = this.input.call.unaryAnswer(this.status, this.contentType, body);
    if (shaped === 'not_json') {
      return this.fail(new AttemptError('bad_response', 'upstream answered with a body that is not JSON', { phase: 'body', failover: true, retryable: false }));
    }
    this.settle('done', { ok: true, answer: { ...shaped, upstreamBody: body } });
  }

  protected onBroken(err: AttemptError): void {
    this.fail(err);
  }

  protected fail(err: AttemptError): void {
    if (!this.live) return;
    this.cancel(err);
    this.settle('failed', { ok: false, error: err });
  }

  protected onClientGone(err: AttemptError): void {
    this.fail(err);
  }

  protected currentPhase(): AttemptError['phase'] {
    if (this.chunks.length > 0) return 'body';
    return this.controller ? 'headers' : 'connect';
  }

  private settle(phase: 'done' | 'failed', result: UnaryResult): void {
    this.phase = phase;
    this.release();
    clearTimeout(this.totalTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.resolveResult(result);
  }

  private readonly onTotalTimeout = (): void => {
    this.fail(timeoutError('total_timeout', this.input.tier.timeouts.total_ms, this.currentPhase()));
  };

  private readonly onIdleTimeout = (): void => {
    this.fail(timeoutError('idle_timeout', this.input.tier.timeouts.idle_ms, 'body'));
  };
}
