import type { StreamPart } from '../core/stream-part.js';
import { TranslatedOutput } from '../stream-output/translated-output.js';
import { EVENT_CONTENT, EVENT_DONE, EVENT_HELD, EVENT_REWRITTEN, newFacts, type EventFacts } from '../core/event-facts.js';
import { RAW, type RelayHandover, type StreamOutput, type StreamRenderer } from '../core/stream-output.js';

/** An event the output waits with: its bytes and flags, and (should it be rendered instead) its parts; after commit its JSON, for the handover. */
interface Waiting {
  raw: Buffer;
  flags: number;
  parts: readonly StreamPart[];
  json?: unknown;
}

const NO_PARTS: readonly StreamPart[] = [];

/**
 * A relayed stream whose reader may hold a tool call written as text (text-call-reader.ts).
 * An event the reader has not decided waits here, as its bytes and its parts: before commit
 * every event; after it, one whose text ends in what may begin an opener (EVENT_HELD). A plain
 * answer goes out as the byte relay it is (what waited, as it came, then RAW), and only the few
 * fields a takeover needs are noted of each event (RelayHandover). Once the reader rewrites the
 * answer (EVENT_REWRITTEN: a form opened or was converted) the rest of it is rendered in the
 * client's protocol: from the start when nothing went out yet, else by a renderer that carries
 * on under the ids, blocks and indexes the relayed bytes showed. The raw form never reaches the client.
 */
export class TextCallOutput implements StreamOutput {
  private mode: 'undecided' | 'relay' | 'render' = 'undecided';
  private waiting: Waiting[] = [];
  private rendered: TranslatedOutput | null = null;

  constructor(
    private readonly relay: StreamOutput,
    private readonly renderer: () => StreamRenderer,
    private readonly handover: RelayHandover,
  ) {}

  get relays(): boolean {
    return this.mode !== 'render';
  }

  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null {
    if (this.rendered) return this.rendered.event(facts);
    const flags = facts.flags;
    if (flags & EVENT_REWRITTEN) return this.render(facts);
    // Nothing is content until the reader decides (it takes held content out of the parts); after commit, a held tail waits.
    if (this.mode === 'undecided' && !(flags & (EVENT_CONTENT | EVENT_DONE))) {
      // Before commit the handover is told now: should these events be rendered instead, a fresh renderer draws them.
      this.handover.relayed(facts.json, facts.parts);
      this.waiting.push({ raw, flags, parts: facts.parts.length > 0 ? facts.parts.slice() : NO_PARTS });
      return null;
    }
    if (flags & EVENT_HELD) {
      this.waiting.push({ raw, flags, parts: facts.parts.slice(), json: facts.json });
      return null;
    }
    this.mode = 'relay';
    const before = this.waiting.length > 0 ? this.flushWaiting() : null;
    const own = this.relay.event(facts, raw);
    // Told of what reached the client from the relay, as its bytes or reframed (Gemini's JSON array).
    if (own !== null) this.handover.relayed(facts.json, facts.parts);
    if (before === null) return own;
    return Buffer.concat([...before, own === RAW ? raw : (own ?? Buffer.alloc(0))]);
  }

  keepAlive(raw: Buffer): Buffer | null {
    return this.current().keepAlive(raw);
  }

  complete(terminated: boolean): Buffer | null {
    const end = this.current().complete(terminated);
    if (this.waiting.length === 0) return end;
    return Buffer.concat([...this.flushWaiting(), end ?? Buffer.alloc(0)]);
  }

  upstreamError(raw: Buffer, facts: EventFacts): Buffer {
    return this.current().upstreamError(raw, facts);
  }

  interrupted(message: string): Buffer {
    return this.current().interrupted(message);
  }

  /** From this event on the answer is rendered: what waited first, then this event. */
  private render(facts: EventFacts): Buffer | null {
    // Nothing went out yet: the client's stream is drawn from its start; else it carries on from the relayed bytes.
    this.rendered = new TranslatedOutput(this.mode === 'undecided' ? this.renderer() : this.handover.renderer());
    this.mode = 'render';
    const events: Array<readonly StreamPart[]> = [];
    for (const waiting of this.waiting) if (waiting.parts.length > 0) events.push(waiting.parts);
    this.waiting = [];
    events.push(facts.parts);
    return this.rendered.renderAll(events);
  }

  /**
   * What waited, through the relay as any event (its bytes, or what the relay makes of them): the
   * handover notes each held after commit, in order, since the client now has it.
   */
  private flushWaiting(): Buffer[] {
    const bytes: Buffer[] = [];
    const facts = newFacts();
    for (const waiting of this.waiting) {
      facts.flags = waiting.flags;
      facts.parts = waiting.parts;
      facts.json = waiting.json;
      const own = this.relay.event(facts, waiting.raw);
      if (own === null) continue;
      if (waiting.json !== undefined) this.handover.relayed(waiting.json, waiting.parts);
      bytes.push(own === RAW ? waiting.raw : own);
    }
    this.waiting = [];
    return bytes;
  }

  private current(): StreamOutput {
    return this.rendered ?? this.relay;
  }
}
