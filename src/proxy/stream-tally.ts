import { EVENT_DONE, EVENT_FINISH, EVENT_MALFORMED, newFacts, type StreamReader } from '../protocols/core/types.js';
import { mergeUsage, type Usage } from '../protocols/core/usage.js';
import type { FinishReason } from '../protocols/core/neutral.js';
import type { StreamPart } from '../protocols/core/stream-part.js';
import type { TelemetryBus } from '../telemetry/bus.js';

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
  /** The protocol's terminator came: nothing after it means anything. */
  sawTerminator = false;
  private readonly texts: string[] = [];
  /** The wire's reader of this one stream (stateful: block ids, tool-call numbering). */
  private readonly reader: StreamReader;

  /** `reader`: the wire's reader of this stream (the call's, see UpstreamCall.streamReader). Malformed events are reported as `chunk_error`s of `route` and `tier`. */
  constructor(
    reader: StreamReader,
    private readonly telemetry: TelemetryBus,
    private readonly route: string,
    private readonly tier: string,
  ) {
    this.reader = reader;
  }

  /** The TTFT budget ended: what the reader makes of a tool call written as text it still holds (see StreamReader.ttftEnded). */
  ttftEnded(): { badCall: string } | 'released' | null {
    return this.reader.ttftEnded?.(this.facts) ?? null;
  }

  /** Reads one event's data into `facts`, keeping its usage and text; false for a malformed event (counted, to be dropped). */
  read(data: string): boolean {
    const facts = this.facts;
    this.reader.read(data, facts);
    if (facts.flags & EVENT_MALFORMED) {
      this.countChunkError();
      return false;
    }
    if (facts.usage) this.usage = mergeUsage(this.usage, facts.usage);
    if (facts.text !== undefined) this.texts.push(facts.text);
    return true;
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
