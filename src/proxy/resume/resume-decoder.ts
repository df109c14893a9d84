import type { StreamPart } from '../../protocols/core/stream-part.js';
import type { EventFacts, PartStage } from '../../protocols/core/event-facts.js';

export type ResumeMeans = 'continue' | 'replay';

/**
 * The resume stream's parts, reduced to what extends the client's answer. Its text-start is
 * dropped: the client's text block is open, and the resume's text goes on in it.
 * - continue: the resume tier was given the delivered text as its answer's start, so its
 *   text is the rest of it; relayed as it comes. Some servers stream the prefill back first
 *   (llama.cpp's llama-server does, as one chunk): text that repeats the whole delivered text
 *   at the start is held while it matches and dropped; text that parts from it is relayed.
 * - replay: the resume tier answers the same request from the start; its text is checked
 *   against the delivered prefix and only what goes past it is relayed. The first character
 *   that differs calls `onDiverge` (the stream must end with the error event: never two texts).
 * Reasoning is never relayed: the client's open block is text, and the first stream's
 * reasoning is what the client has.
 */
export class ResumeDecoder implements PartStage {
  /** Characters of the delivered prefix the replay has matched so far. */
  private matched = 0;
  private diverged = false;
  /** Continuation: the start of its text, held while it may still be the prefill streamed back. */
  private echo: string | null = '';
  /** The id of the resume's text block, for the held text when it goes out. */
  private textId = '';
  private readonly events: StreamPart[] = [];

  constructor(
    private readonly inner: PartStage,
    private readonly means: ResumeMeans,
    private readonly delivered: string,
    private readonly onDiverge: (message: string) => void,
  ) {}

  decode(facts: EventFacts, out: StreamPart[]): void {
    if (this.diverged) return;
    const events = this.events;
    events.length = 0;
    this.inner.decode(facts, events);
    for (const event of events) {
      if (event.type === 'reasoning-start' || event.type === 'reasoning-delta' || event.type === 'reasoning-end' || event.type === 'text-start') continue;
      if (this.means === 'continue' && this.echo !== null) {
        this.dropEcho(event, out);
        continue;
      }
      if (this.means === 'replay' && !this.pastPrefix(event, out)) {
        if (this.diverged) return;
        continue;
      }
      out.push(event);
    }
  }

  /** A continuation's first events: its text held while it repeats the delivered text; dropped when it repeated all of it. */
  private dropEcho(event: StreamPart, out: StreamPart[]): void {
    const prefix = this.delivered;
    const held = this.echo as string;
    if (event.type === 'usage') {
      out.push(event);
      return;
    }
    if (event.type !== 'text-delta') {
      if (held !== '') out.push({ type: 'text-delta', id: this.textId, delta: held });
      this.echo = null;
      out.push(event);
      return;
    }
    this.textId = event.id;
    const text = held + event.delta;
    const n = Math.min(text.length, prefix.length);
    if (text.slice(0, n) === prefix.slice(0, n)) {
      if (text.length < prefix.length) {
        this.echo = text;
        return;
      }
      this.echo = null;
      if (text.length > prefix.length) out.push({ type: 'text-delta', id: event.id, delta: text.slice(prefix.length) });
      return;
    }
    this.echo = null;
    out.push({ type: 'text-delta', id: event.id, delta: text });
  }

  /** Whether the replay is past the delivered prefix for this event (pushing the part of a text that goes past it). */
  private pastPrefix(event: StreamPart, out: StreamPart[]): boolean {
    const prefix = this.delivered;
    if (this.matched >= prefix.length) return true;
    if (event.type === 'text-delta') {
      const delta = event.delta;
      const overlap = Math.min(delta.length, prefix.length - this.matched);
      if (delta.slice(0, overlap) !== prefix.slice(this.matched, this.matched + overlap)) {
        return this.diverge(`the replay differs from the delivered text at character ${this.matched + firstDifference(delta, prefix, this.matched)}`);
      }
      this.matched += overlap;
      if (overlap < delta.length) out.push({ type: 'text-delta', id: event.id, delta: delta.slice(overlap) });
      return false; // pushed (or nothing to push) here
    }
    if (event.type === 'usage') return true;
    // A text's end, a finish, a tool call or an error before the replay has repeated what the client has: not the same answer.
    return this.diverge(`the replay ended its text after ${this.matched} of the ${prefix.length} delivered characters`);
  }

  private diverge(message: string): false {
    this.diverged = true;
    this.onDiverge(message);
    return false;
  }
}

function firstDifference(delta: string, prefix: string, at: number): number {
  let i = 0;
  while (i < delta.length && delta[i] === prefix[at + i]) i++;
  return i;
}
