import type { IncomingHttpHeaders } from 'node:http';
import { EVENT_ERROR, EVENT_PROGRESS, RAW, type StreamOutput } from '../protocols/core/types.js';
import type { FinishReason } from '../protocols/core/neutral.js';
import type { Usage } from '../protocols/core/usage.js';
import type { Framer } from '../sse/framer.js';
import { AttemptError, type Phase } from './attempt-error.js';
import { ClientWriter, type Upstream } from './client-writer.js';
import type { Tier } from '../config/schema.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { SilenceGuard, type StallWatch } from './silence-guard.js';
import { MAX_EVENT_BYTES, tooLargeEvent } from './stream-errors.js';
import type { StreamSink } from './stream-sink.js';
import type { StreamTally } from './stream-tally.js';
import type { AnswerReader, UpstreamDispatch } from './upstream-dispatch.js';

export interface StreamEnd {
  /** null when the stream finished cleanly. */
  interruption: AttemptError | null;
  /** The upstream's usage when it counts the whole answer: a stream cut before its finish has none (see `earlyUsage`). */
  usage: Usage | undefined;
  /**
   * What the upstream had reported when the stream ended before its finish (Anthropic's
   * message_start: the prompt's count, an output of 0 or 1): its prompt figures hold, its
   * completion is counted from the delivered `text` instead.
   */
  earlyUsage?: Usage;
  chunkErrors: number;
  /** The generated text, for a token estimate when the upstream reported no usage. */
  text: string;
  /** Why the answer ended, as its finish said; absent when none came. */
  finishReason?: FinishReason;
  /** The upstream's own name for the model, as its stream said. */
  responseModel?: string;
  /** The client's response, left open for a resume (`keepOpen`); null when the stream ended it. */
  open: StreamSink | null;
}

/** What a relay is given by the attempt it takes over from. */
export interface RelayInput {
  tier: Tier;
  client: ClientLifetime;
  /** How events reach the client: relayed as they came, or rendered in the client's protocol. */
  output: StreamOutput;
  /**
   * Set on a route with `on_break: resume`: asked when the committed stream breaks; true leaves
   * the client's response open (no error event) for a resume, and `finished` carries the sink.
   */
  keepOpen?: (err: AttemptError) => boolean;
  /** Set with `keepOpen`: the learned stall, a silence judged by the stream's own pace (src/proxy/silence-guard.ts). */
  stall?: StallWatch;
}

/** How long an upstream may keep its response open after its terminator before it is cut. */
const UPSTREAM_LINGER_MS = 2_000;

/**
 * A committed stream, from the commit point to its end: each event goes to the output (its
 * upstream bytes unchanged when relayed), through the client writer's backpressure, guarded
 * against silence (idle_ms, and on a resume route the learned stall): only content ends a
 * silence, keep-alives are relayed but are not progress. It ends complete (the output adds a
 * missing terminator) or with one error event; `finished` says which. There is no failover
 * from here.
 */
export class StreamRelay implements AnswerReader, Upstream {
  readonly finished: Promise<StreamEnd>;
  private resolveFinished!: (end: StreamEnd) => void;
  private relaying = true;
  private leftOpen = false;
  /** What the chunk being framed sends to the client. */
  private out: Buffer[] = [];
  /** Something of this chunk does not go out as it came (dropped, or rendered). */
  private altered = false;
  private readonly output: StreamOutput;
  private readonly writer: ClientWriter;
  private readonly silence: SilenceGuard;
  /** The chunk being framed carried content already (a gap is one chunk's arrival to the next's; the commit's counts). */
  private progressed = true;
  /** The tier's opt-in `stream_max_ms`; total_ms ended at commit (see UpstreamDispatch.handOver). */
  private readonly capTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly input: RelayInput,
    private readonly dispatch: UpstreamDispatch,
    private readonly framer: Framer,
    private readonly tally: StreamTally,
    private readonly sink: StreamSink,
    upToCommit: Buffer,
  ) {
    this.output = input.output;
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    this.silence = new SilenceGuard(input.tier.timeouts.idle_ms, input.stall, this.clientPaused, this.silent);
    const capMs = input.tier.timeouts.stream_max_ms;
    if (capMs > 0) this.capTimer = setTimeout(StreamRelay.capReached, Math.max(0, capMs - dispatch.elapsedMs), this);
    this.writer = new ClientWriter(sink, this, input.client);
    // The first content leaves now, not once the rest of the chunk it came in has been read.
    this.writer.writeNow(upToCommit);
  }

  /** Headers come before any content, so before commit: a relay never sees them. */
  onHeaders(_status: number, _headers: IncomingHttpHeaders): void {}

  onBody(chunk: Buffer): void {
    this.altered = false;
    this.progressed = false;
    const aligned = this.framer.push(chunk, this.onEvent);
    this.endOfChunk(aligned ? chunk : null);
  }

  /**
   * A chunk was framed: what its events queued goes out. Fast path: a chunk of whole events
   * (`whole`), all relayed unchanged, is forwarded as the same Buffer.
   */
  endOfChunk(whole: Buffer | null): void {
    if (!this.relaying) return; // ended inside this chunk
    if (this.framer.pendingBytes > MAX_EVENT_BYTES) return this.onBroken(tooLargeEvent());
    if (this.out.length === 0) return;
    const bytes = whole !== null && !this.altered ? whole : this.takeOut();
    this.out = [];
    this.writer.write(bytes);
    this.completeIfTerminated();
  }

  readonly onEvent = (raw: Buffer, data: string | null): void => {
    const tally = this.tally;
    // Ended earlier in this chunk, or past the terminator: the rest of the chunk means nothing.
    if (!this.relaying || tally.sawTerminator) return;
    if (data === null) return this.keep(this.output.keepAlive(raw), raw); // a keep-alive
    if (!tally.read(data)) {
      this.altered = true;
      return;
    }
    const flags = tally.facts.flags;
    if (flags & EVENT_PROGRESS && !this.progressed) {
      this.progressed = true;
      this.silence.progress();
    }
    if (flags & EVENT_ERROR) {
      this.flushOut();
      return this.interrupt(
        new AttemptError('upstream_error', 'the upstream reported an error after the first token', { phase: 'body', failover: false, retryable: false }),
        this.output.upstreamError(raw, tally.facts),
      );
    }
    tally.noteEnding(flags);
    this.keep(this.output.event(tally.facts, raw), raw);
  };

  onEnd(): void {
    this.framer.flush(this.onEvent);
    this.upstreamEnded();
  }

  /** The upstream closed its response: the stream is complete if it finished, else broken. */
  upstreamEnded(): void {
    if (!this.relaying) return;
    this.flushOut();
    this.complete();
  }

  onBroken(err: AttemptError): void {
    // An answer over a size cap came over a sound connection: its own reason and words (and no break a resume could mend).
    const tooLarge = err.reason === 'answer_too_large';
    const message = tooLarge ? `${err.message}, after the first token` : `upstream connection broke after the first token: ${err.message}`;
    this.interrupt(new AttemptError(tooLarge ? 'answer_too_large' : 'broken_stream', message, { phase: 'body', failover: false, retryable: false }));
  }

  /** Ends the stream with the output's error event for `err` (a resume whose replay diverged). */
  stop(err: AttemptError): void {
    this.interrupt(err);
  }

  onClientGone(err: AttemptError): void {
    // A stopping server still tells its client why the stream ends; a gone client hears nothing.
    if (err.reason === 'shutdown') return this.interrupt(err);
    this.settle(err);
  }

  phase(): Phase {
    return 'body';
  }

  pause(): void {
    this.dispatch.pause();
  }

  resume(): void {
    this.silence.restart();
    this.dispatch.resume();
  }

  /** Queues what the client gets for one event. */
  private keep(piece: typeof RAW | Buffer | null, raw: Buffer): void {
    if (piece === RAW || piece === raw) this.out.push(raw);
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
    if (this.out.length === 0 || !this.relaying) return;
    this.writer.write(this.takeOut());
    this.out = [];
  }

  /**
   * The upstream sent its terminator: the answer is complete, so the client's response ends
   * now, even if the upstream is slow to close its side; it gets a moment to end cleanly.
   */
  private completeIfTerminated(): void {
    if (!this.tally.sawTerminator || !this.relaying) return;
    this.complete();
    this.dispatch.lingerFor(UPSTREAM_LINGER_MS);
  }

  /** The answer ended: complete when it finished (the output adds a missing terminator), a break when it did not. */
  private complete(): void {
    if (!this.relaying) return;
    const tally = this.tally;
    if (tally.sawTerminator || tally.sawFinish) {
      this.writer.end(this.output.complete(tally.sawTerminator));
      this.settle(null);
      return;
    }
    tally.countChunkError();
    this.interrupt(new AttemptError('broken_stream', 'upstream ended the stream without finishing it', { phase: 'body', failover: false, retryable: false }));
  }

  /** Ends a stream that cannot go on with the output's error event (or `tail`), unless a resume keeps it open. */
  private interrupt(err: AttemptError, tail?: Buffer): void {
    if (!this.relaying) return;
    this.dispatch.cancel(err);
    if (this.input.keepOpen?.(err)) {
      this.writer.release();
      this.leftOpen = true;
    } else this.writer.end(tail ?? this.output.interrupted(err.message));
    this.settle(err);
  }

  private settle(interruption: AttemptError | null): void {
    if (!this.relaying) return;
    this.relaying = false;
    this.silence.stop();
    clearTimeout(this.capTimer);
    this.dispatch.finish();
    const tally = this.tally;
    const whole = interruption === null || tally.sawFinish;
    this.resolveFinished({
      interruption,
      usage: whole ? tally.usage : undefined,
      earlyUsage: whole ? undefined : tally.usage,
      chunkErrors: tally.chunkErrors,
      text: tally.text(),
      finishReason: tally.finishReason,
      responseModel: tally.model,
      open: this.leftOpen ? this.sink : null,
    });
  }

  private readonly clientPaused = (): boolean => this.writer.paused;

  /** idle_ms, or the learned stall, of silence: a break (a resume route's resume may mend it). */
  private readonly silent = (err: AttemptError): void => this.interrupt(err);

  private static capReached(relay: StreamRelay): void {
    const capMs = relay.input.tier.timeouts.stream_max_ms;
    // The operator's cap, not the tier's failing: it says nothing about the tier's health.
    relay.interrupt(
      new AttemptError('total_timeout', `stream not complete within stream_max_ms (${capMs} ms)`, {
        phase: 'total',
        failover: false,
        retryable: false,
        timedOut: true,
        blame: null,
      }),
    );
  }
}
