import { isRecord } from '../../util/is-record.js';
import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage } from '../core/event-facts.js';
import type { RAW, RelayHandover, StreamOutput, StreamRenderer } from '../core/stream-output.js';
import { TrackedRelay } from '../stream-output/tracked-relay.js';
import type { GeminiRenderer, RelayedSoFar } from './render.js';

/** What the chunks a client had from a relay showed: their response id and model version, and that some went out. */
class SoFar {
  readonly seen: RelayedSoFar = { opened: false };

  note(json: unknown): void {
    this.seen.opened = true;
    if (!isRecord(json)) return;
    if (this.seen.responseId === undefined && typeof json.responseId === 'string') this.seen.responseId = json.responseId;
    if (this.seen.modelVersion === undefined && typeof json.modelVersion === 'string') this.seen.modelVersion = json.modelVersion;
  }
}

/**
 * A relayed Gemini stream a renderer takes over (a tool call written as text after relayed
 * text): Gemini's chunks have no blocks or indexes to carry on, only the response id and model
 * version they named, and (for the JSON-array form) an array already open.
 */
export class GeminiHandover implements RelayHandover {
  private readonly sofar = new SoFar();

  constructor(private readonly make: () => GeminiRenderer) {}

  relayed(json: unknown, _parts: readonly StreamPart[]): void {
    this.sofar.note(json);
  }

  renderer(): StreamRenderer {
    const renderer = this.make();
    renderer.continueAs(this.sofar.seen);
    return renderer;
  }
}

/**
 * A Gemini stream relayed on a resume route (see TrackedRelay): a resume carries on under the
 * response id and model version the relayed chunks named, in the array they opened.
 */
export class TrackedGeminiRelay extends TrackedRelay {
  private readonly sofar = new SoFar();

  constructor(
    relay: StreamOutput,
    delivered: PartStage,
    private readonly renderer: GeminiRenderer,
  ) {
    super(relay, delivered);
  }

  carryOn(): void {
    this.renderer.continueAs(this.sofar.seen);
  }

  protected noted(facts: EventFacts, _parts: readonly StreamPart[], out: typeof RAW | Buffer | null): void {
    if (out !== null) this.sofar.note(facts.json);
  }
}
