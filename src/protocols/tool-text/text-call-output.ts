import type { StreamPart } from '../core/stream-part.js';
import { TranslatedOutput } from '../stream-output/translated-output.js';
import { EVENT_CONTENT, EVENT_REWRITTEN, RAW, type EventFacts, type StreamOutput, type StreamRenderer } from '../core/types.js';

/**
 * A relayed stream whose reader may hold a tool call written as text (text-call-reader.ts).
 * Until the reader decides, every event waits here, as its bytes and as its parts. A plain
 * answer then goes out as the byte relay it is (what waited, as it came, then RAW); an answer
 * whose calls were recovered is rendered in the client's protocol instead, from its first
 * event on, so the raw form never reaches the client.
 */
export class TextCallOutput implements StreamOutput {
  private mode: 'undecided' | 'relay' | 'render' = 'undecided';
  private waitingBytes: Buffer[] = [];
  private waitingParts: StreamPart[][] = [];
  private readonly rendered: TranslatedOutput;

  constructor(
    private readonly relay: StreamOutput,
    renderer: StreamRenderer,
  ) {
    this.rendered = new TranslatedOutput(renderer);
  }

  get relays(): boolean {
    return this.mode !== 'render';
  }

  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null {
    if (this.mode === 'relay') return this.relay.event(facts, raw);
    if (this.mode === 'render') return this.rendered.event(facts);
    // Nothing is content until the reader decides (it takes held content out of the parts).
    if (!(facts.flags & EVENT_CONTENT)) {
      this.waitingBytes.push(raw);
      this.waitingParts.push(facts.parts.slice());
      return null;
    }
    const bytes = this.waitingBytes;
    const parts = this.waitingParts;
    this.waitingBytes = [];
    this.waitingParts = [];
    if (facts.flags & EVENT_REWRITTEN) {
      this.mode = 'render';
      return this.rendered.renderAll([...parts, facts.parts]);
    }
    this.mode = 'relay';
    const own = this.relay.event(facts, raw);
    if (bytes.length === 0) return own;
    return Buffer.concat([...bytes, own === RAW ? raw : (own ?? Buffer.alloc(0))]);
  }

  keepAlive(raw: Buffer): Buffer | null {
    return this.current().keepAlive(raw);
  }

  complete(terminated: boolean): Buffer | null {
    return this.current().complete(terminated);
  }

  upstreamError(raw: Buffer, facts: EventFacts): Buffer {
    return this.current().upstreamError(raw, facts);
  }

  interrupted(message: string): Buffer {
    return this.current().interrupted(message);
  }

  private current(): StreamOutput {
    return this.mode === 'render' ? this.rendered : this.relay;
  }
}
