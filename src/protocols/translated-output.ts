import type { NeutralEvent } from './neutral.js';
import type { EventFacts, StreamDecoder, StreamOutput, StreamRenderer } from './types.js';

/** A stream from a server in one protocol, rendered for a client in another: decode, then render, event by event. */
export class TranslatedOutput implements StreamOutput {
  readonly relays = false;
  private readonly events: NeutralEvent[] = [];

  constructor(private readonly decoder: StreamDecoder, private readonly renderer: StreamRenderer) {}

  event(facts: EventFacts): Buffer | null {
    const text = this.renderer.render(this.decode(facts));
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
    const error = this.decode(facts).find((event) => event.type === 'error');
    return this.interrupted(`upstream error after the first token: ${error?.message ?? 'unknown error'}`);
  }

  interrupted(message: string): Buffer {
    return Buffer.from(this.renderer.error(message));
  }

  private decode(facts: EventFacts): NeutralEvent[] {
    this.events.length = 0;
    this.decoder.decode(facts, this.events);
    return this.events;
  }
}
