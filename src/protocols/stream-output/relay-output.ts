import { RAW, type StreamOutput } from '../core/stream-output.js';
import type { EventFacts } from '../core/event-facts.js';

/**
 * A stream relayed to a client that speaks the upstream's own protocol: every event's bytes
 * go out as they came, the upstream's own error event included. What differs per protocol:
 * the terminator added to a stream that finished without one (`tail`), and its error event.
 */
export class RelayOutput implements StreamOutput {
  readonly relays = true;

  constructor(
    private readonly tail: Buffer | null,
    private readonly errorEvent: (message: string) => string,
  ) {}

  event(_facts: EventFacts): typeof RAW | null {
    return RAW;
  }

  keepAlive(raw: Buffer): Buffer {
    return raw;
  }

  complete(terminated: boolean): Buffer | null {
    return terminated ? null : this.tail;
  }

  upstreamError(raw: Buffer): Buffer {
    return raw;
  }

  interrupted(message: string): Buffer {
    return Buffer.from(this.errorEvent(message));
  }
}
