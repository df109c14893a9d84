import type { ResumableRelay } from '../core/client-codec.js';
import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage, RAW, StreamOutput } from '../core/types.js';
import type { OllamaRenderer } from './render.js';

/**
 * An Ollama stream relayed as its bytes on a resume route: the byte relay stays, and each line is
 * also decoded by `delivered` (the text the client has). Ollama's lines name no ids: a recovery
 * carries on under the model the relayed lines named, counting tool calls on from theirs.
 */
export class TrackedOllamaRelay implements ResumableRelay {
  readonly relays = true;
  private model: string | undefined;
  private calls = 0;
  private readonly scratch: StreamPart[] = [];

  constructor(
    private readonly relay: StreamOutput,
    private readonly delivered: PartStage,
    private readonly renderer: OllamaRenderer,
  ) {}

  carryOn(): void {
    this.renderer.continueAs(this.model, this.calls);
  }

  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null {
    this.delivered.decode(facts, this.scratch);
    for (const part of this.scratch) if (part.type === 'tool-input-start') this.calls++;
    this.scratch.length = 0;
    const json = facts.json as { model?: unknown } | null;
    if (this.model === undefined && typeof json?.model === 'string') this.model = json.model;
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
