import type { IncomingHttpHeaders } from 'node:http';
import { EVENT_ERROR, EVENT_PROGRESS } from '../protocols/core/event-facts.js';
import type { StreamOutput } from '../protocols/core/stream-output.js';
import type { FinishReason } from '../protocols/core/neutral.js';
import type { Usage } from '../protocols/core/usage.js';
import type { Framer } from '../sse/framer.js';
import type { AttemptError, Phase } from './attempt-error.js';
import { ChunkBatch } from './chunk-batch.js';
import { ClientWriter, type Upstream } from './client-writer.js';
import type { Tier } from '../config/schema.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { SilenceGuard, type StallWatch } from './silence-guard.js';
import { brokenAfterContent, MAX_EVENT_BYTES, streamCapReached, tooLargeEvent, unfinishedStream, upstreamErrorAfterContent } from './stream-errors.js';
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
  private readonly batch = new ChunkBatch();
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
    this.batch.begin();
    this.progressed = false;
    const aligned = this.framer.push(chunk, this.onEvent);
    this.endOfChunk(aligned ? chunk : null);
  }

  /** A chunk was framed: what its events queued goes out (`whole`: the chunk, when it is whole events; chunk-batch.ts). */
  endOfChunk(whole: Buffer | null): void {
    if (!this.relaying) return; // ended inside this chunk
    if (this.framer.pendingBytes > MAX_EVENT_BYTES) return this.onBroken(tooLargeEvent());
    if (this.batch.empty) return;
    this.writer.write(this.batch.take(whole));
    this.completeIfTerminated();
  }

  readonly onEvent = (raw: Buffer, data: string | null): void => {
    const tally = this.tally;
    // Ended earlier in this chunk, or past the terminator: the rest of the chunk means nothing.
    if (!this.relaying || tally.sawTerminator) return;
    if (data === null) return this.batch.keep(this.output.keepAlive(raw), raw); // a keep-alive
    if (!tally.read(data)) return this.batch.keep(null, raw); // a malformed event is not passed on
    const flags = tally.facts.flags;
    if (flags & EVENT_PROGRESS && !this.progressed) {
      this.progressed = true;
      this.silence.progress();
    }
    if (flags & EVENT_ERROR) {
      this.flushOut();
      return this.interrupt(upstreamErrorAfterContent(), this.output.upstreamError(raw, tally.facts));
    }
    tally.noteEnding(flags);
    this.batch.keep(this.output.event(tally.facts, raw), raw);
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
    this.interrupt(brokenAfterContent(err));
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

  /** Hands what this chunk has queued so far to the writer (before an ending written mid-chunk). */
  private flushOut(): void {
    if (this.batch.empty || !this.relaying) return;
    this.writer.write(this.batch.take());
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
    this.interrupt(unfinishedStream());
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
    relay.interrupt(streamCapReached(relay.input.tier.timeouts.stream_max_ms));
  }
}
