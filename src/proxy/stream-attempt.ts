import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, newFacts, RAW, type StreamOutput, type StreamReader,
} from '../protocols/types.js';
import { mergeUsage, type Usage } from '../protocols/usage.js';
import type { Framer } from '../sse/framer.js';
import { AttemptError, timeoutError } from './attempt-error.js';
import { ClientWriter, type StreamSink } from './client-writer.js';
import { emptyStream, MAX_EVENT_BYTES, tooLargeEvent, upstreamErrorBeforeContent } from './stream-errors.js';
import { type AttemptInput, UpstreamAttempt } from './upstream-attempt.js';

type Controller = Dispatcher.DispatchController;

export interface StreamAttemptInput extends AttemptInput {
  /** Time allowed for the first content event: the tier's ttft_ms, cut to what the route's deadline leaves. */
  ttftBudgetMs: number;
  /** Reported when the budget runs out: the tier's own TTFT limit, or the route's deadline. */
  ttftLimit: 'ttft_timeout' | 'deadline';
  /** How events reach the client: relayed as they came, or rendered in the client's protocol. */
  output: StreamOutput;
  onChunkError: () => void;
  /**
   * The commit step, called once, synchronously, at the first content event: answers the
   * client (status, headers) and returns where the stream goes. No byte reaches the client before it.
   */
  commit: (attempt: StreamAttempt) => StreamSink;
  /**
   * Set on a route with `on_break: resume`: asked when the committed stream breaks; true leaves
   * the client's response open (no error event) for a recovery, and `finished` carries the sink.
   */
  keepOpen?: (err: AttemptError) => boolean;
}

export interface StreamEnd {
  /** null when the stream finished cleanly. */
  interruption: AttemptError | null;
  usage: Usage | undefined;
  chunkErrors: number;
  /** The generated text, for a token estimate when the upstream reported no usage. */
  text: string;
  /** The client's response, left open for a recovery (`keepOpen`); null when the stream ended it. */
  open: StreamSink | null;
}

export type CommitResult = { committed: true; attempt: StreamAttempt } | { committed: false; error: AttemptError };

/** How long an upstream may keep its response open after its terminator before it is cut. */
const UPSTREAM_LINGER_MS = 2_000;

/**
 * A streaming attempt. It holds every event until the first content event arrives within
 * the TTFT budget (the commit point); before that, any failure is invisible to the client.
 * After commit it hands each event to the output (its upstream bytes unchanged when relayed),
 * guarded by an exact idle timer. A failure before commit settles `committed` with the error
 * (the routing loop moves on); after it, the stream ends with one error event and `finished`
 * says why.
 */
export class StreamAttempt extends UpstreamAttempt {
  readonly committed: Promise<CommitResult>;
  readonly finished: Promise<StreamEnd>;
  private resolveCommitted!: (result: CommitResult) => void;
  private resolveFinished!: (end: StreamEnd) => void;
  /** The upstream finished its response (it may still do so after its terminator was relayed). */
  private upstreamEnded = false;
  private writer: ClientWriter | null = null;
  private sink: StreamSink | null = null;
  private leftOpen = false;
  /** What goes to the client, held before commit. */
  private held: Buffer[] = [];
  /** What the chunk being framed sends to the client. */
  private out: Buffer[] = [];
  /** Something of this chunk does not go out as it came (dropped, or rendered). */
  private altered = false;
  private readonly framer: Framer;
  private readonly output: StreamOutput;
  private readonly facts = newFacts();
  private readonly reader: StreamReader;
  private usage: Usage | undefined;
  private readonly texts: string[] = [];
  private sawFinish = false;
  private sawTerminator = false;
  private chunkErrors = 0;
  private readonly ttftTimer: NodeJS.Timeout;
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | null = null;
  private lingerTimer: NodeJS.Timeout | null = null;

  constructor(private readonly stream: StreamAttemptInput) {
    super(stream);
    this.framer = stream.call.wire.framer();
    this.reader = stream.call.wire.reader();
    this.output = stream.output;
    this.committed = new Promise((resolve) => (this.resolveCommitted = resolve));
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
    this.altered = false;
    const wasRelaying = this.phase === 'relaying';
    const aligned = this.framer.push(chunk, this.onEvent);
    if (!this.live) return; // ended inside this chunk
    if (this.framer.pendingBytes > MAX_EVENT_BYTES) return this.onBroken(tooLargeEvent());
    if (wasRelaying) this.idleTimer?.refresh();
    if (this.out.length === 0) return;
    // Fast path: a chunk of whole events, all relayed unchanged, after commit: forward it as it came.
    const bytes = wasRelaying && aligned && !this.altered ? chunk : this.takeOut();
    this.out = [];
    if (this.phase === 'waiting') this.held.push(bytes);
    else this.writer?.write(bytes);
    this.completeIfTerminated();
  }

  private readonly onEvent = (raw: Buffer, data: string | null): void => {
    // Failed earlier in this chunk, or past the terminator: the rest of the chunk means nothing.
    if (!this.live || this.sawTerminator) return;
    if (data === null) {
      // Comments and field-less events: keep-alives. Dropped before commit.
      const kept = this.phase === 'relaying' ? this.output.keepAlive(raw) : null;
      this.keep(kept === raw ? RAW : kept, raw);
      return;
    }
    const facts = this.facts;
    this.reader.read(data, facts);
    const flags = facts.flags;
    if (flags & EVENT_MALFORMED) {
      this.chunkErrors++;
      this.stream.onChunkError();
      this.altered = true;
      return;
    }
    if (facts.usage) this.usage = mergeUsage(this.usage, facts.usage);
    if (facts.text !== undefined) this.texts.push(facts.text);
    if (flags & EVENT_ERROR) {
      if (this.phase === 'waiting') return this.fail(upstreamErrorBeforeContent(data));
      this.flushOut();
      return this.interrupt(new AttemptError('upstream_error', 'the upstream reported an error after the first token', { phase: 'body', failover: false, retryable: false }), this.output.upstreamError(raw, facts));
    }
    // A terminator before any content is an empty stream; one that is also the finish (Ollama's
    // done line, Responses' response.completed) is an answer that happens to be empty.
    if (this.phase === 'waiting' && flags & EVENT_DONE && !(flags & EVENT_CONTENT)) return this.fail(emptyStream());
    if (flags & EVENT_FINISH) this.sawFinish = true;
    if (flags & EVENT_DONE) this.sawTerminator = true;
    this.keep(this.output.event(facts), raw);
    if (this.phase === 'waiting' && flags & EVENT_CONTENT) this.commitNow();
  };

  /** Queues what the client gets for one event. */
  private keep(piece: typeof RAW | Buffer | null, raw: Buffer): void {
    if (piece === RAW) this.out.push(raw);
    else {
      this.altered = true;
      if (piece) this.out.push(piece);
    }
  }

  private takeOut(): Buffer {
    const out = this.out;
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  /** Hands what this chunk has queued so far to the writer (before an ending written mid-chunk). */
  private flushOut(): void {
    if (this.out.length === 0 || this.phase !== 'relaying') return;
    this.writer?.write(this.takeOut());
    this.out = [];
  }

  /** The commit point: the client gets its answer, the held events, then the rest of this chunk. */
  private commitNow(): void {
    this.phase = 'relaying';
    clearTimeout(this.ttftTimer);
    this.idleTimer = setTimeout(this.onIdleTimeout, this.stream.tier.timeouts.idle_ms);
    const controller = this.controller as Controller; // data arrived, so undici has handed it over
    this.sink = this.stream.commit(this);
    this.writer = new ClientWriter(this.sink, {
      pause: () => controller.pause(),
      resume: () => {
        this.idleTimer?.refresh();
        controller.resume();
      },
    }, () => this.input.client.aborted);
    const upToCommit = [...this.held, ...this.out.splice(0)];
    this.held = [];
    this.writer.write(upToCommit.length === 1 ? upToCommit[0] : Buffer.concat(upToCommit));
    this.resolveCommitted({ committed: true, attempt: this });
  }

  protected onEnd(): void {
    this.upstreamEnded = true;
    this.framer.flush(this.onEvent);
    if (this.phase === 'waiting') return this.fail(emptyStream());
    if (this.phase !== 'relaying') return;
    this.flushOut();
    this.complete();
  }

  protected onBroken(err: AttemptError): void {
    if (this.phase === 'waiting') return this.fail(err);
    const message = err.reason === 'answer_too_large' ? `${err.message}, after the first token` : `upstream connection broke after the first token: ${err.message}`;
    this.interrupt(new AttemptError('broken_stream', message, { phase: 'body', failover: false, retryable: false }));
  }

  protected fail(err: AttemptError): void {
    if (this.phase !== 'waiting') return;
    this.phase = 'failed';
    this.clearTimers();
    this.cancel(err);
    this.release();
    this.resolveCommitted({ committed: false, error: err });
  }

  protected onClientGone(err: AttemptError): void {
    if (this.phase === 'waiting') return this.fail(err);
    // A stopping server still tells its client why the stream ends; a gone client hears nothing.
    if (err.reason === 'shutdown') return this.interrupt(err);
    if (this.phase !== 'relaying') return;
    this.clearTimers();
    this.settleFinished(err);
  }

  protected currentPhase(): AttemptError['phase'] {
    if (this.phase !== 'waiting') return 'body';
    return this.controller ? 'first_token' : 'connect';
  }

  /**
   * The upstream sent its terminator: the answer is complete, so the client's response ends
   * now, even if the upstream is slow to close its side. The upstream gets a moment to end
   * cleanly (its socket then goes back to the pool) before it is cut.
   */
  private completeIfTerminated(): void {
    if (!this.sawTerminator || this.phase !== 'relaying') return;
    this.complete();
    if (!this.upstreamEnded) {
      this.lingerTimer = setTimeout(() => this.cancel(new Error('upstream did not close after its terminator')), UPSTREAM_LINGER_MS);
      this.lingerTimer.unref();
    }
  }

  override onResponseEnd(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    super.onResponseEnd();
  }

  /** The answer ended: complete when it finished (the output adds a missing terminator), a break when it did not. */
  private complete(): void {
    if (this.phase !== 'relaying') return;
    if (this.sawTerminator || this.sawFinish) {
      this.clearTimers();
      this.writer?.end(this.output.complete(this.sawTerminator));
      this.settleFinished(null);
      return;
    }
    this.chunkErrors++;
    this.stream.onChunkError();
    this.interrupt(new AttemptError('broken_stream', 'upstream ended the stream without finishing it', { phase: 'body', failover: false, retryable: false }));
  }

  /** Ends a committed stream that cannot go on with the output's error event (or `tail`). */
  private interrupt(err: AttemptError, tail?: Buffer): void {
    if (this.phase !== 'relaying') return;
    this.clearTimers();
    this.cancel(err);
    if (this.stream.keepOpen?.(err)) {
      this.writer?.release();
      this.leftOpen = true;
    } else this.writer?.end(tail ?? this.output.interrupted(err.message));
    this.settleFinished(err);
  }

  /** Ends the attempt from outside (a recovery whose replay diverged): before commit a failure, after it the error event. */
  stop(err: AttemptError): void {
    if (this.phase === 'waiting') this.fail(err);
    else this.interrupt(err);
  }

  private settleFinished(interruption: AttemptError | null): void {
    if (this.phase !== 'relaying') return;
    this.phase = 'done';
    this.release();
    this.resolveFinished({ interruption, usage: this.usage, chunkErrors: this.chunkErrors, text: this.texts.join(''), open: this.leftOpen ? this.sink : null });
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
