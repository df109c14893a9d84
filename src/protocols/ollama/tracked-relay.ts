import type { StreamPart } from '../core/stream-part.js';
import type { EventFacts, PartStage } from '../core/event-facts.js';
import type { StreamOutput } from '../core/stream-output.js';
import { TrackedRelay } from '../stream-output/tracked-relay.js';
import type { OllamaRenderer } from './render.js';

/**
 * An Ollama stream relayed as its bytes on a resume route (see TrackedRelay). Ollama's lines name
 * no ids: a resume carries on under the model the relayed lines named, counting tool calls on
 * from theirs.
 */
export class TrackedOllamaRelay extends TrackedRelay {
  private model: string | undefined;
  private calls = 0;

  constructor(
    relay: StreamOutput,
    delivered: PartStage,
    private readonly renderer: OllamaRenderer,
  ) {
    super(relay, delivered);
  }

  carryOn(): void {
    this.renderer.continueAs(this.model, this.calls);
  }

  protected noted(facts: EventFacts, parts: readonly StreamPart[]): void {
    for (const part of parts) if (part.type === 'tool-input-start') this.calls++;
    const json = facts.json as { model?: unknown } | null;
    if (this.model === undefined && typeof json?.model === 'string') this.model = json.model;
  }
}
