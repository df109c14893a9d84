import type { StreamPart } from '../../protocols/stream-part.js';
import type { EventFacts, RAW, StreamOutput } from '../../protocols/types.js';
import type { DeliveredText } from './delivered-text.js';

/** What a relayed Chat Completions stream showed the client of its identity, for a recovery to go on under. */
export interface ChatIdentity {
  id: string;
  created: number;
  model: string;
}

/**
 * A Chat Completions stream relayed as its bytes on a resume route: the byte relay stays, and
 * each event is also decoded for the delivered text (no rendering). The first chunk's id,
 * created and model are what a recovery's chunks must carry.
 */
export class TrackedChatRelay implements StreamOutput {
  readonly relays = true;
  identity: ChatIdentity | null = null;
  private readonly scratch: StreamPart[] = [];

  constructor(private readonly relay: StreamOutput, private readonly delivered: DeliveredText) {}

  event(facts: EventFacts): typeof RAW | Buffer | null {
    this.delivered.decode(facts, this.scratch);
    this.scratch.length = 0;
    if (this.identity === null) this.identity = identityOf(facts.json);
    return this.relay.event(facts);
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

function identityOf(json: unknown): ChatIdentity | null {
  const chunk = json as { id?: unknown; created?: unknown; model?: unknown } | null;
  if (typeof chunk?.id !== 'string') return null;
  return { id: chunk.id, created: typeof chunk.created === 'number' ? chunk.created : Math.floor(Date.now() / 1000), model: typeof chunk.model === 'string' ? chunk.model : '' };
}
