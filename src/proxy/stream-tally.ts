import { EVENT_DONE, EVENT_FINISH, EVENT_MALFORMED, newFacts, type StreamReader } from '../protocols/core/event-facts.js';
import { mergeUsage, type Usage } from '../protocols/core/usage.js';
import type { FinishReason } from '../protocols/core/neutral.js';
import type { StreamPart } from '../protocols/core/stream-part.js';
import type { TelemetryBus } from '../telemetry/bus.js';

/** How often a held tool call's growth is told at most (the dashboard repaints 8 times a second; a second is alive enough). */
const HOLD_TOLD_EVERY_MS = 1000;

const NO_MODEL = (): undefined => undefined;

/**
 * What one stream's events have said so far: read once per event (the one place a stream's
 * events are read), shared by the attempt before commit and the relay after it. The
 * facts are filled in place: one facts object per stream.
 */
export class StreamTally {
  readonly facts = newFacts();
  usage: Usage | undefined;
  chunkErrors = 0;
  /** The answer's end reason came. */
  sawFinish = false;
  /** What it said (the first finish of the stream's answer). */
  finishReason: FinishReason | undefined;
  /** The upstream's own name for the model, from the first event that names it. */
  model: string | undefined;
  /** The protocol's terminator came: nothing after it means anything. */
  sawTerminator = false;
  private readonly texts: string[] = [];
  /** The wire's reader of this one stream (stateful: block ids, tool-call numbering). */
  private readonly reader: StreamReader;
  /** The reader may hold a tool call written as text (the request offers tools): each event then asks it how much it holds. */
  readonly holds: boolean;
  /** performance.now() when the form held now began (0: none), and when its growth was last told. */
  private holdSince = 0;
  private holdTold = 0;

  /**
   * `reader`: the wire's reader of this stream (the call's, see UpstreamCall.streamReader).
   * Malformed events are reported as `chunk_error`s of `route` and `tier`, a held tool call
   * written as text as request `id`'s.
   */
  constructor(
    reader: StreamReader,
    private readonly telemetry: TelemetryBus,
    private readonly route: string,
    private readonly tier: string,
    private readonly id = '',
    private readonly modelOf: (event: Record<string, unknown>) => string | undefined = NO_MODEL,
  ) {
    this.reader = reader;
    this.holds = typeof reader.heldForm === 'function';
  }

  /** The TTFT budget ended: what the reader makes of the reasoning it may hold (see StreamReader.ttftEnded). */
  ttftEnded(): 'released' | null {
    return this.reader.ttftEnded?.(this.facts) ?? null;
  }

  /** Characters of a tool call written as text the reader holds (0: none). */
  heldForm(): number {
    return this.reader.heldForm?.() ?? 0;
  }

  /** A form the client cannot run waits to know whether this is the last tier (see StreamReader.awaitsLastTier). */
  awaitsLastTier(): boolean {
    return this.reader.awaitsLastTier?.() ?? false;
  }

  /** That is known now (see StreamReader.lastTierKnown). */
  lastTierKnown(): { badCall: string } | 'released' | null {
    return this.reader.lastTierKnown?.(this.facts) ?? null;
  }

  /** The hold of a form was cut (see StreamReader.holdEnded). */
  holdEnded(why: string): { badCall: string } | 'released' {
    return this.reader.holdEnded?.(this.facts, why) ?? { badCall: why };
  }

  /** Reads one event's data into `facts`, keeping its usage and text; false for a malformed event (counted, to be dropped). */
  read(data: string): boolean {
    const facts = this.facts;
    this.reader.read(data, facts);
    if (facts.flags & EVENT_MALFORMED) {
      this.countChunkError();
      return false;
    }
    if (this.model === undefined && facts.json !== undefined) this.model = this.modelOf(facts.json as Record<string, unknown>);
    if (facts.usage) this.usage = mergeUsage(this.usage, facts.usage);
    if (facts.text !== undefined) this.texts.push(facts.text);
    if (this.holds) this.tellHold();
    return true;
  }

  /** A held form's growth, for the dashboard: when it begins, at most once a second while it grows, and when it ends. */
  private tellHold(): void {
    const chars = this.heldForm();
    if (chars === 0 && this.holdSince === 0) return;
    const now = performance.now();
    if (chars === 0) this.holdSince = 0;
    else if (this.holdSince === 0) this.holdSince = now;
    else if (now - this.holdTold < HOLD_TOLD_EVERY_MS) return;
    this.holdTold = now;
    const ms = chars === 0 ? 0 : Math.round(now - this.holdSince);
    this.telemetry.emit({ type: 'tool_text_hold', id: this.id, route: this.route, tier: this.tier, chars, ms });
  }

  /** After the event was accepted: whether it finished the answer or ended the stream. */
  noteEnding(flags: number): void {
    if (flags & EVENT_FINISH && !this.sawFinish) {
      this.sawFinish = true;
      this.finishReason = finishOf(this.facts.parts);
    }
    if (flags & EVENT_DONE) this.sawTerminator = true;
  }

  countChunkError(): void {
    this.chunkErrors++;
    this.telemetry.emit({ type: 'chunk_error', route: this.route, tier: this.tier });
  }

  /** The generated text, for a token estimate when the upstream reported no usage. */
  text(): string {
    return this.texts.join('');
  }
}

/** The reason of the finish part among an event's parts (read once a stream, at its finish). */
function finishOf(parts: readonly StreamPart[]): FinishReason | undefined {
  for (const part of parts) if (part.type === 'finish') return part.reason;
  return undefined;
}
