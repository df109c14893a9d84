import type { ResumableRelay } from '../core/client-codec.js';
import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage } from '../core/event-facts.js';
import type { RAW, StreamOutput } from '../core/stream-output.js';

/**
 * A stream relayed as its bytes on a resume route: the byte relay stays, and each event is also
 * decoded by `delivered` (the text the client has; no rendering). Each protocol notes what a
 * resume's renderer must carry on under (`noted`: a chunk id, a model, an open array) and hands
 * it over at `carryOn`.
 */
export abstract class TrackedRelay implements ResumableRelay {
  readonly relays = true;
  private readonly scratch: StreamPart[] = [];

  constructor(
    private readonly relay: StreamOutput,
    private readonly delivered: PartStage,
  ) {}

  /** A resume writes with the renderer from now on: it carries on from what the client saw. */
  abstract carryOn(): void;

  /** One event, its parts as delivered and what went out for it (null: nothing). */
  protected abstract noted(facts: EventFacts, parts: readonly StreamPart[], out: typeof RAW | Buffer | null): void;

  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null {
    this.delivered.decode(facts, this.scratch);
    const out = this.relay.event(facts, raw);
    this.noted(facts, this.scratch, out);
    this.scratch.length = 0;
    return out;
  }

  keepAlive(raw: Buffer): Buffer | null {
    return this.relay.keepAlive(raw);
  }

  complete(terminated: boolean): Buffer | null {
    return this.relay.complete(terminated);
  }

  upstreamError(raw: Buffer, facts: EventFacts): Buffer {
    return this.relay.upstreamError(raw, facts);
  }

  interrupted(message: string): Buffer {
    return this.relay.interrupted(message);
  }
}
