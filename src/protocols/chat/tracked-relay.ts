import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage, RAW, StreamOutput } from '../core/types.js';
import type { ResumableRelay } from '../core/client-codec.js';
import type { ChatRenderer } from './render.js';

/** What a relayed Chat Completions stream showed the client of its identity, for a recovery to go on under. */
export interface ChatIdentity {
  id: string;
  created: number;
  model: string;
}

/**
 * A Chat Completions stream relayed as its bytes on a resume route: the byte relay stays, and
 * each event is also decoded by `delivered` (for the text the client has; no rendering). The
 * first chunk's id, created and model are what a recovery's chunks must carry.
 */
export class TrackedChatRelay implements ResumableRelay {
  readonly relays = true;
  private identity: ChatIdentity | null = null;
  private readonly scratch: StreamPart[] = [];

  constructor(
    private readonly relay: StreamOutput,
    private readonly delivered: PartStage,
    private readonly renderer: ChatRenderer,
  ) {}

  /** A recovery writes with the renderer from now on: it carries on under the identity the client saw. */
  carryOn(): void {
    if (this.identity) this.renderer.continueAs(this.identity);
  }

  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null {
    this.delivered.decode(facts, this.scratch);
    this.scratch.length = 0;
    if (this.identity === null) this.identity = identityOf(facts.json);
    return this.relay.event(facts, raw);
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

/** The identity a Chat chunk carries (null for one without an id). */
export function identityOf(json: unknown): ChatIdentity | null {
  const chunk = json as { id?: unknown; created?: unknown; model?: unknown } | null;
  if (typeof chunk?.id !== 'string') return null;
  return {
    id: chunk.id,
    created: typeof chunk.created === 'number' ? chunk.created : Math.floor(Date.now() / 1000),
    model: typeof chunk.model === 'string' ? chunk.model : '',
  };
}
