import type { StreamPart } from '../../protocols/core/stream-part.js';
import type { EventFacts, PartStage } from '../../protocols/core/event-facts.js';

/**
 * What the client has of a stream on a resume route: the answer's text so far, and whether
 * the stream stands where a resume is sound. Only text is resumed: a stream whose last
 * content was reasoning or of a kind only its wire carries (a hosted tool's item, which may
 * work for seconds without a word), that made a tool call, or whose answer has finished (there
 * is nothing to continue), ends with the error event as on any route.
 * Kept by the stage the stream's output already runs, so it costs one pass over the parts
 * it read anyway and memory proportional to the answer.
 */
export class DeliveredText implements PartStage {
  private readonly parts: string[] = [];
  private last: 'none' | 'text' | 'reasoning' | 'opaque' | 'finish' = 'none';
  private madeToolCall = false;
  private length = 0;
  private deltas = 0;

  constructor(private readonly inner: PartStage) {}

  decode(facts: EventFacts, out: StreamPart[]): void {
    const from = out.length;
    this.inner.decode(facts, out);
    for (let i = from; i < out.length; i++) {
      const event = out[i];
      if (event.type === 'text-delta') {
        if (event.delta === '') continue;
        this.parts.push(event.delta);
        this.length += event.delta.length;
        this.deltas++;
        this.last = 'text';
      } else if (event.type === 'reasoning-delta' || (event.type === 'reasoning-end' && event.signature !== undefined)) this.last = 'reasoning';
      else if (event.type === 'tool-input-start' || event.type === 'tool-input-delta') this.madeToolCall = true;
      else if (event.type === 'opaque' || event.type === 'finish') this.last = event.type;
    }
  }

  /** The stream broke inside a text run, the only place a resume can continue seamlessly. */
  get resumable(): boolean {
    return !this.madeToolCall && this.last === 'text';
  }

  /** Characters (UTF-16 units) of text the client has. */
  get chars(): number {
    return this.length;
  }

  /**
   * Text deltas the client has: at least one token each (local servers send one token per
   * delta, cloud ones may send more), so the most a continuation may still generate is the
   * request's max_tokens less this, never less than what is left.
   */
  get pieces(): number {
    return this.deltas;
  }

  text(): string {
    if (this.parts.length > 1) this.parts.splice(0, this.parts.length, this.parts.join(''));
    return this.parts[0] ?? '';
  }
}
