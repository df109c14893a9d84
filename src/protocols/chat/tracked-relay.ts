import type { EventFacts, PartStage } from '../core/event-facts.js';
import type { StreamOutput } from '../core/stream-output.js';
import { TrackedRelay } from '../stream-output/tracked-relay.js';
import type { ChatRenderer } from './render.js';

/** What a relayed Chat Completions stream showed the client of its identity, for a resume to go on under. */
export interface ChatIdentity {
  id: string;
  created: number;
  model: string;
}

/**
 * A Chat Completions stream relayed as its bytes on a resume route (see TrackedRelay). The first
 * chunk's id, created and model are what a resume's chunks must carry.
 */
export class TrackedChatRelay extends TrackedRelay {
  private identity: ChatIdentity | null = null;

  constructor(
    relay: StreamOutput,
    delivered: PartStage,
    private readonly renderer: ChatRenderer,
  ) {
    super(relay, delivered);
  }

  carryOn(): void {
    if (this.identity) this.renderer.continueAs(this.identity);
  }

  protected noted(facts: EventFacts): void {
    if (this.identity === null) this.identity = identityOf(facts.json);
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
