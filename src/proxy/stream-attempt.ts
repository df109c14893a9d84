import type { IncomingHttpHeaders } from 'node:http';
import { EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_PROGRESS } from '../protocols/core/event-facts.js';
import { RAW } from '../protocols/core/stream-output.js';
import type { Usage } from '../protocols/core/usage.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Framer } from '../sse/framer.js';
import { AttemptError, type Phase, timeoutError } from './attempt-error.js';
import { badToolCall, emptyStream, MAX_EVENT_BYTES, tooLargeEvent, upstreamErrorBeforeContent } from './stream-errors.js';
import type { CommitPort } from './stream-sink.js';
import { type RelayInput, StreamRelay } from './stream-relay.js';
import { StreamTally } from './stream-tally.js';
import { type AnswerReader, type AttemptInput, UpstreamDispatch } from './upstream-dispatch.js';

export interface StreamAttemptInput extends AttemptInput, RelayInput {
  /** Time allowed for the first content event: the tier's ttft_ms, cut to what the route's deadline leaves. */
  ttftBudgetMs: number;
  /** Reported when the budget runs out: the tier's own TTFT limit, or the route's deadline. */
  ttftLimit: 'ttft_timeout' | 'deadline';
  /** Where the first content event goes: called once, synchronously; no byte reaches the client before it. */
  port: CommitPort;
  /** This attempt's place among the request's tries (the client's x-llm-route-attempts). */
  ordinal: number;
  /** Malformed events are reported here, as the route's (and a tool call written as text held, as the request's). */
  telemetry: TelemetryBus;
  route: string;
  requestId?: string;
}

export type CommitResult = { committed: true; relay: StreamRelay; elapsedMs: number } | { committed: false; error: AttemptError };

/**
 * A streaming attempt, from connect to its first content event within the TTFT budget (the
 * commit point). Before that it holds every event and any failure is invisible to the client:
 * `committed` settles with the error and the routing loop moves on. At commit it hands the
 * commit port's sink, what it held and the rest of the stream to a StreamRelay, and is done.
 * A tool call written as text whose first bytes came within the budget meets the TTFT: it is
 * held (no commit) while content keeps arriving, until it closes, or idle_ms of silence, the
 * opt-in stream_max_ms or the answer cap ends it (docs/tool-text.md).
 */
export class StreamAttempt implements AnswerReader {
  readonly committed: Promise<CommitResult>;
  private resolveCommitted!: (result: CommitResult) => void;
  private waiting = true;
  /** What goes to the client at commit. */
  private held: Buffer[] = [];
  private relay: StreamRelay | null = null;
  private readonly framer: Framer;
  private readonly tally: StreamTally;
  private readonly ttftTimer: NodeJS.Timeout;
  private readonly dispatch: UpstreamDispatch;
  /** While a tool call written as text is held: ms from the attempt's start to its first bytes (the tier's TTFT), its idle and cap timers. */
  private heldAtMs = -1;
  /** The upstream closed while its answer waited on whether this is the last tier. */
  private upstreamClosed = false;
  private holdIdle: NodeJS.Timeout | undefined;
  private holdCap: NodeJS.Timeout | undefined;

  constructor(private readonly input: StreamAttemptInput) {
    this.framer = input.call.wire.framer();
    const reader = input.call.streamReader(input.lastTier?.isLast);
    this.tally = new StreamTally(reader, input.telemetry, input.route, input.tier.name, input.requestId, input.call.wire.streamModel);
    this.committed = new Promise((resolve) => (this.resolveCommitted = resolve));
    this.ttftTimer = setTimeout(StreamAttempt.ttftExpired, input.ttftBudgetMs, this);
    this.dispatch = new UpstreamDispatch(input, this);
    this.dispatch.start();
  }

  get elapsedMs(): number {
    return this.dispatch.elapsedMs;
  }

  /** A tool call written as text is held, its first bytes in time: the tier is answering (a hedge waits for it). */
  get holdingForm(): boolean {
    return this.heldAtMs >= 0 && this.waiting;
  }

  /** Hedging (docs/hedging.md): what the upstream reported of its usage so far (a stopped hedge's loser may have been billed for it). */
  get usageSoFar(): Usage | undefined {
    return this.tally.usage;
  }

  /** Ends the attempt from outside (a resume whose replay diverged): before commit a failure, after it the error event. */
  cut(err: AttemptError): void {
    if (this.relay) this.relay.stop(err);
    else this.stop(err);
  }

  onHeaders(_status: number, headers: IncomingHttpHeaders): void {
    const type = headers['content-type'];
    if (typeof type === 'string' && type.includes('application/json')) {
      // The upstream ignored stream: true; it is not speaking the protocol we asked for.
      this.stop(new AttemptError('bad_response', 'upstream answered JSON to a streaming request', { phase: 'headers', failover: true, retryable: false }));
    }
  }

  onBody(chunk: Buffer): void {
    this.framer.push(chunk, this.onEvent);
    // Committed inside this chunk: the relay sends what the chunk's later events queued.
    if (this.relay) return this.relay.endOfChunk(null);
    if (this.waiting && this.framer.pendingBytes > MAX_EVENT_BYTES) this.stop(tooLargeEvent());
  }

  onEnd(): void {
    this.framer.flush(this.onEvent);
    // The last, unterminated event was the first content: the relay ends the stream.
    if (this.relay) return this.relay.upstreamEnded();
    // A whole answer waits on whether this is the last tier: it ends once that is known.
    if (this.tally.awaitsLastTier()) return void (this.upstreamClosed = true);
    this.stop(emptyStream());
  }

  onBroken(err: AttemptError): void {
    if (err.reason === 'answer_too_large' && this.holdingForm) return this.cutHold(err, 'larger than the answer cap');
    this.stop(err);
  }

  onClientGone(err: AttemptError): void {
    this.stop(err);
  }

  phase(): Phase {
    return this.dispatch.connected ? 'first_token' : 'connect';
  }

  /** The attempt failed before its first content: the client saw nothing. */
  stop(err: AttemptError): void {
    if (!this.waiting) return;
    this.waiting = false;
    clearTimeout(this.ttftTimer);
    this.endHold();
    this.dispatch.cancel(err);
    this.dispatch.finish();
    this.held = [];
    this.resolveCommitted({ committed: false, error: err });
  }

  private readonly onEvent = (raw: Buffer, data: string | null): void => {
    // Committed earlier in this chunk: the rest of it is the relay's.
    if (this.relay) return this.relay.onEvent(raw, data);
    // Failed earlier in this chunk; and comments (keep-alives) are dropped before commit.
    if (!this.waiting || data === null) return;
    const tally = this.tally;
    if (!tally.read(data)) return;
    const flags = tally.facts.flags;
    // A held form's silence ends with content only (its own text included), as a committed stream's does.
    if (flags & EVENT_PROGRESS) this.holdIdle?.refresh();
    if (flags & EVENT_ERROR) return this.stop(upstreamErrorBeforeContent(data, tally.facts));
    // A terminator before any content is an empty stream; one that is also the finish (Ollama's
    // done line, Responses' response.completed) is an answer that happens to be empty. (Unless the
    // reader holds the answer, waiting to know whether this is the last tier.)
    if (flags & EVENT_DONE && !(flags & EVENT_CONTENT) && !tally.awaitsLastTier()) return this.stop(emptyStream());
    tally.noteEnding(flags);
    this.take(raw);
  };

  /** The event read into the tally's facts: what the output makes of it is held; content commits. */
  private take(raw: Buffer): void {
    const piece = this.input.output.event(this.tally.facts, raw);
    // The output may have ended the attempt on this very event (a resume's replay that differs from its first text on).
    if (!this.waiting) return;
    if (piece === RAW) this.held.push(raw);
    else if (piece) this.held.push(piece);
    if (this.tally.facts.flags & EVENT_CONTENT) this.commit();
    else if (this.heldAtMs < 0 && this.tally.holds && this.tally.heldForm() > 0) this.beginHold();
  }

  /**
   * A tool call written as text began within the TTFT budget, which it meets: from now on the
   * hold lasts while content keeps arriving (idle_ms, refreshed by each event with content), to the tier's
   * stream_max_ms when set; total_ms and the route's deadline, which bound a wait for first
   * content, no longer apply, as they do not to a committed stream.
   */
  private beginHold(): void {
    const { timeouts } = this.input.tier;
    clearTimeout(this.ttftTimer);
    this.dispatch.holdOpen();
    this.heldAtMs = this.dispatch.elapsedMs;
    this.holdIdle = setTimeout(StreamAttempt.holdStalled, timeouts.idle_ms, this);
    if (timeouts.stream_max_ms > 0) this.holdCap = setTimeout(StreamAttempt.holdCapped, Math.max(0, timeouts.stream_max_ms - this.heldAtMs), this);
    // Whether this is the last tier the request tries, found out while the form is written: a call it cannot run may wait on it.
    const last = this.input.lastTier;
    if (last && last.isLast() === undefined) void last.settled().then(this.lastTierKnown);
  }

  /** A call the client cannot run waited on whether this is the last tier: it fails over, or goes out as written. */
  private readonly lastTierKnown = (): void => {
    if (!this.waiting) return;
    const verdict = this.tally.lastTierKnown();
    if (verdict === null) return;
    if (verdict !== 'released') return this.stop(badToolCall(verdict.badCall));
    this.take(Buffer.alloc(0));
    if (this.relay && (this.upstreamClosed || this.tally.sawTerminator)) this.relay.upstreamEnded();
  };

  private endHold(): void {
    clearTimeout(this.holdIdle);
    clearTimeout(this.holdCap);
  }

  /**
   * The hold ended before its form closed (`error`: the stall, cap or size that ended it): a
   * bad tool call the next tier answers instead; on the last tier the request tries, the text
   * as written goes out, and the stream then ends as a committed one would, with `error`.
   */
  private cutHold(error: AttemptError, why: string): void {
    if (!this.waiting) return;
    const verdict = this.tally.holdEnded(why);
    if (verdict !== 'released') return this.stop(badToolCall(verdict.badCall));
    this.take(Buffer.alloc(0));
    if (this.relay) this.relay.stop(error);
    else this.stop(error);
  }

  /** The commit point: the client gets its answer and the held events; the relay takes the rest. */
  private commit(): void {
    this.waiting = false;
    clearTimeout(this.ttftTimer);
    this.endHold();
    // A held call's first bytes were the tier's first token: its TTFT (the client's is the commit, see the exchange).
    const elapsedMs = this.heldAtMs >= 0 ? this.heldAtMs : this.dispatch.elapsedMs;
    const sink = this.input.port.commit(this.input.tier, this.input.ordinal);
    const held = this.held;
    this.held = [];
    const relay = new StreamRelay(this.input, this.dispatch, this.framer, this.tally, sink, held.length === 1 ? held[0] : Buffer.concat(held));
    this.relay = relay;
    this.dispatch.handOver(relay);
    this.resolveCommitted({ committed: true, relay, elapsedMs });
  }

  private static ttftExpired(attempt: StreamAttempt): void {
    const { ttftLimit, ttftBudgetMs } = attempt.input;
    // Reasoning held with the text it may lead to (a relay) goes out when the budget ends: the model is answering.
    if (attempt.tally.ttftEnded() === 'released') return attempt.take(Buffer.alloc(0));
    attempt.stop(timeoutError(ttftLimit, ttftBudgetMs, attempt.phase()));
  }

  private static holdStalled(attempt: StreamAttempt): void {
    const idleMs = attempt.input.tier.timeouts.idle_ms;
    attempt.cutHold(timeoutError('idle_timeout', idleMs, 'idle'), `stalled: no content for idle_ms (${idleMs} ms)`);
  }

  private static holdCapped(attempt: StreamAttempt): void {
    const capMs = attempt.input.tier.timeouts.stream_max_ms;
    const error = new AttemptError('total_timeout', `stream not complete within stream_max_ms (${capMs} ms)`, {
      phase: 'total',
      failover: false,
      retryable: false,
      timedOut: true,
      blame: null,
    });
    attempt.cutHold(error, `still open at stream_max_ms (${capMs} ms)`);
  }
}
