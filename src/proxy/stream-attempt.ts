import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, EVENT_USAGE_ONLY,
  type EventFacts, type Usage,
} from '../providers/types.js';
import { SseParser } from '../sse/parser.js';
import { AttemptError, timeoutError } from './attempt-error.js';
import { ClientWriter } from './client-writer.js';
import { emptyStream, MAX_EVENT_BYTES, streamErrorEvent, tooLargeEvent } from './stream-errors.js';
import { type AttemptInput, UpstreamAttempt } from './upstream-attempt.js';

type Controller = Dispatcher.DispatchController;

export interface StreamAttemptInput extends AttemptInput {
  /** Time allowed for the first content event: the tier's ttft_ms, cut to what the route's deadline leaves. */
  ttftBudgetMs: number;
  /** Reported when the budget runs out: the tier's own TTFT limit, or the route's deadline. */
  ttftLimit: 'ttft_timeout' | 'deadline';
  /** The client asked for the usage chunk itself (otherwise it is hidden). */
  clientWantsUsage: boolean;
  onChunkError: () => void;
  /**
   * Called once, synchronously, at the commit point: answers the client (status, headers) and
   * returns where the stream goes. No byte reaches the client before it.
   */
  open: (attempt: StreamAttempt) => StreamSink;
}

/** Where a committed stream's bytes go (the client's response). */
export interface StreamSink {
  /** false when the client is not keeping up: the attempt pauses the upstream until `drain`. */
  write(data: Buffer): boolean;
  onceDrain(resume: () => void): void;
  /** Ends the response; `tail` is written last (a [DONE] or an error event). */
  end(tail: Buffer | null): void;
}

export interface StreamEnd {
  /** null when the stream finished cleanly. */
  interruption: AttemptError | null;
  usage: Usage | undefined;
  chunkErrors: number;
}

export type CommitResult = { committed: true; attempt: StreamAttempt } | { committed: false; error: AttemptError };

/** waiting: before the first content event; relaying: committed; done: the stream's end is decided. */
type Phase = 'waiting' | 'relaying' | 'done';

const DONE_EVENT = Buffer.from('data: [DONE]\n\n');
/** How long an upstream may keep its response open after [DONE] before it is cut. */
const UPSTREAM_LINGER_MS = 2_000;

/**
 * A streaming attempt. It holds every event until the first content event arrives within
 * the TTFT budget (the commit point); before that, any failure is invisible to the client.
 * After commit it relays each event's upstream bytes unchanged, guarded by an exact idle timer.
 * A failure before commit settles `commit` with the error (the routing loop moves on); after
 * it, the stream ends with one error event and `finished` says why.
 */
export class StreamAttempt extends UpstreamAttempt {
  readonly commit: Promise<CommitResult>;
  readonly finished: Promise<StreamEnd>;
  private resolveCommit!: (result: CommitResult) => void;
  private resolveFinished!: (end: StreamEnd) => void;
  private phase: Phase = 'waiting';
  /** The upstream finished its response (it may still do so after [DONE] was relayed). */
  private upstreamEnded = false;
  private writer: ClientWriter | null = null;
  /** Raw events held before commit. */
  private held: Buffer[] = [];
  /** Events of the chunk being parsed that are to be forwarded. */
  private out: Buffer[] = [];
  private dropped = false;
  private readonly parser = new SseParser();
  private readonly facts: EventFacts = { flags: 0, usage: undefined };
  private usage: Usage | undefined;
  private sawFinish = false;
  private sawDone = false;
  private chunkErrors = 0;
  private readonly ttftTimer: NodeJS.Timeout;
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;
  private lingerTimer: NodeJS.Timeout | null = null;

  constructor(private readonly stream: StreamAttemptInput) {
    super(stream);
    this.commit = new Promise((resolve) => (this.resolveCommit = resolve));
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    this.ttftTimer = setTimeout(this.onTtftTimeout, stream.ttftBudgetMs);
    this.totalTimer = setTimeout(this.onTotalTimeout, stream.tier.timeouts.total_ms);
    this.dispatch();
  }

  protected onSuccessHeaders(_c: Controller, _status: number, headers: IncomingHttpHeaders): void {
    const type = headers['content-type'];
    if (typeof type === 'string' && type.includes('application/json')) {
      // The upstream ignored stream: true; it is not speaking the protocol we asked for.
      this.fail(new AttemptError('bad_response', 'upstream answered JSON to a streaming request', { phase: 'headers', failover: true, retryable: false }));
    }
  }

  protected onBody(_c: Controller, chunk: Buffer): void {
    this.dropped = false;
    const wasRelaying = this.phase === 'relaying';
    const aligned = this.parser.push(chunk, this.onEvent);
    if (this.phase === 'done' || (this.settled && this.phase === 'waiting')) return; // ended inside this chunk
    if (this.parser.pendingBytes > MAX_EVENT_BYTES) return this.onBroken(tooLargeEvent());
    if (wasRelaying) this.idleTimer?.refresh();
    const out = this.out;
    if (out.length === 0) return;
    // Fast path: a chunk of whole events, all kept, after commit: forward it as it came.
    const bytes = wasRelaying && aligned && !this.dropped ? chunk : out.length === 1 ? out[0] : Buffer.concat(out);
    this.out = [];
    if (this.phase === 'waiting') this.held.push(bytes);
    else this.forward(bytes);
    this.completeIfDone();
  }

  private readonly onEvent = (raw: Buffer, data: string | null): void => {
    // Failed earlier in this chunk, or past [DONE]: the rest of the chunk means nothing.
    if ((this.settled && this.phase === 'waiting') || this.sawDone) return;
    if (data === null) {
      // Comments and field-less events: keep-alives. Relayed after commit, dropped before.
      if (this.phase === 'relaying') this.out.push(raw);
      else this.dropped = true;
      return;
    }
    const facts = this.facts;
    this.stream.adapter.inspectEvent(data, facts);
    const flags = facts.flags;
    if (facts.usage) this.usage = facts.usage;
    if (flags & EVENT_MALFORMED) {
      this.chunkErrors++;
      this.stream.onChunkError();
      this.dropped = true;
      return;
    }
    if (this.phase === 'waiting') {
      if (flags & EVENT_DONE) return this.fail(emptyStream());
      if (flags & EVENT_ERROR) return this.fail(new AttemptError('upstream_error', `error event before first token: ${data.slice(0, 200)}`, { phase: 'first_token', failover: true, retryable: false }));
    }
    if (flags & EVENT_FINISH) this.sawFinish = true;
    if (flags & EVENT_DONE) this.sawDone = true;
    if (flags & EVENT_USAGE_ONLY && !this.stream.clientWantsUsage) {
      this.dropped = true;
      return;
    }
    this.out.push(raw);
    if (this.phase === 'waiting' && flags & EVENT_CONTENT) this.commitNow();
  };

  /** The commit point: the client gets its answer, the held events, then the rest of this chunk. */
  private commitNow(): void {
    this.phase = 'relaying';
    this.settled = true;
    clearTimeout(this.ttftTimer);
    this.idleTimer = setTimeout(this.onIdleTimeout, this.stream.tier.timeouts.idle_ms);
    const controller = this.controller as Controller; // data arrived, so undici has handed it over
    this.writer = new ClientWriter(this.stream.open(this), {
      pause: () => controller.pause(),
      resume: () => {
        this.idleTimer?.refresh();
        controller.resume();
      },
    }, () => this.input.client.aborted);
    const upToCommit = [...this.held, ...this.out.splice(0)];
    this.held = [];
    this.forward(upToCommit.length === 1 ? upToCommit[0] : Buffer.concat(upToCommit));
    this.resolveCommit({ committed: true, attempt: this });
  }

  protected onEnd(): void {
    this.upstreamEnded = true;
    this.parser.flush(this.onEvent);
    if (this.phase === 'waiting') {
      if (!this.settled) this.fail(emptyStream());
      return;
    }
    if (this.phase === 'done') return;
    if (this.out.length > 0) {
      this.forward(Buffer.concat(this.out));
      this.out = [];
    }
    this.finish();
  }

  protected onBroken(err: AttemptError): void {
    if (this.phase === 'waiting') return this.fail(err);
    this.interrupt(new AttemptError('broken_stream', `upstream connection broke after the first token: ${err.message}`, { phase: 'body', failover: false, retryable: false }));
  }

  protected fail(err: AttemptError): void {
    if (this.settled) return;
    this.settled = true;
    this.clearTimers();
    this.cancel(err);
    this.release();
    this.resolveCommit({ committed: false, error: err });
  }

  protected onClientGone(err: AttemptError): void {
    if (this.phase === 'waiting') return this.fail(err);
    // A stopping server still tells its client why the stream ends; a gone client hears nothing.
    if (err.reason === 'shutdown') return this.interrupt(err);
    this.clearTimers();
    this.settleFinished(err);
  }

  protected currentPhase(): AttemptError['phase'] {
    if (this.phase !== 'waiting') return 'body';
    return this.controller ? 'first_token' : 'connect';
  }

  protected isRelaying(): boolean {
    return this.phase === 'relaying';
  }

  private forward(bytes: Buffer): void {
    (this.writer as ClientWriter).write(bytes);
  }

  /**
   * [DONE] has been relayed: the answer is complete, so the client's response ends now, even
   * if the upstream is slow to close its side. The upstream gets a moment to end cleanly (its
   * socket then goes back to the pool) before it is cut.
   */
  private completeIfDone(): void {
    if (!this.sawDone || this.phase !== 'relaying') return;
    this.clearTimers();
    (this.writer as ClientWriter).end(null);
    this.settleFinished(null);
    if (!this.upstreamEnded) {
      this.lingerTimer = setTimeout(() => this.cancel(new Error('upstream did not close after [DONE]')), UPSTREAM_LINGER_MS);
      this.lingerTimer.unref();
    }
  }

  override onResponseEnd(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    super.onResponseEnd();
  }

  /** The upstream ended after commit: a finished stream without [DONE] gets one; an unfinished one is a break. */
  private finish(): void {
    if (this.phase !== 'relaying') return;
    if (this.sawDone || this.sawFinish) {
      this.clearTimers();
      (this.writer as ClientWriter).end(this.sawDone ? null : DONE_EVENT);
      this.settleFinished(null);
      return;
    }
    this.chunkErrors++;
    this.stream.onChunkError();
    this.interrupt(new AttemptError('broken_stream', 'upstream ended the stream without finishing it', { phase: 'body', failover: false, retryable: false }));
  }

  private interrupt(err: AttemptError): void {
    if (this.phase !== 'relaying') return;
    this.clearTimers();
    this.cancel(err);
    (this.writer as ClientWriter).end(streamErrorEvent(err.message));
    this.settleFinished(err);
  }

  private settleFinished(interruption: AttemptError | null): void {
    if (this.phase === 'done') return;
    this.phase = 'done';
    this.release();
    this.resolveFinished({ interruption, usage: this.usage, chunkErrors: this.chunkErrors });
  }

  private clearTimers(): void {
    clearTimeout(this.ttftTimer);
    clearTimeout(this.totalTimer);
    if (this.idleTimer) clearTimeout(this.idleTimer);
  }

  private readonly onTtftTimeout = (): void => {
    this.fail(timeoutError(this.stream.ttftLimit, this.stream.ttftBudgetMs, this.controller ? 'first_token' : 'connect'));
  };

  private readonly onTotalTimeout = (): void => {
    const err = timeoutError('total_timeout', this.stream.tier.timeouts.total_ms, this.currentPhase());
    if (this.phase === 'relaying') this.interrupt(err);
    else this.fail(err);
  };

  private readonly onIdleTimeout = (): void => {
    // A client that is not reading pauses the upstream; that silence is not the upstream's.
    if (this.writer?.paused) {
      this.idleTimer?.refresh();
      return;
    }
    this.interrupt(timeoutError('idle_timeout', this.stream.tier.timeouts.idle_ms, 'idle'));
  };
}
