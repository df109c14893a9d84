import type { StreamPart } from '../core/stream-part.js';
import { newFacts, readParts, type EventFacts, type PartStage } from '../core/event-facts.js';
import type { StreamOutput, StreamRenderer } from '../core/stream-output.js';

/**
 * A stream from a server in one protocol, rendered for a client in another: each event's
 * parts (as its reader decoded them, through `stage` when one reshapes them) rendered.
 */
export class TranslatedOutput implements StreamOutput {
  readonly relays = false;
  private readonly parts: StreamPart[] = [];

  constructor(
    private readonly renderer: StreamRenderer,
    private readonly stage: PartStage = readParts,
  ) {}

  event(facts: EventFacts): Buffer | null {
    const text = this.renderer.render(this.staged(facts));
    return text === '' ? null : Buffer.from(text);
  }

  /** Several events' parts at once (what waited for a decision, see tool-text/text-call-output.ts). */
  renderAll(events: ReadonlyArray<readonly StreamPart[]>): Buffer | null {
    let text = '';
    const facts = newFacts();
    for (const parts of events) {
      facts.parts = parts;
      text += this.renderer.render(this.staged(facts));
    }
    return text === '' ? null : Buffer.from(text);
  }

  keepAlive(): null {
    // The upstream's pings are its own protocol's; the client's protocol has its own, and nothing is added.
    return null;
  }

  complete(): Buffer {
    return Buffer.from(this.renderer.end());
  }

  upstreamError(_raw: Buffer, facts: EventFacts): Buffer {
    const error = this.staged(facts).find((part) => part.type === 'error');
    return this.interrupted(`upstream error after the first token: ${error?.message ?? 'unknown error'}`);
  }

  interrupted(message: string): Buffer {
    return Buffer.from(this.renderer.error(message));
  }

  private staged(facts: EventFacts): StreamPart[] {
    this.parts.length = 0;
    this.stage.decode(facts, this.parts);
    return this.parts;
  }
}
