import type { EventFacts } from './event-facts.js';
import type { StreamPart } from './stream-part.js';

// How a committed stream reaches the client: relayed as its upstream bytes or rendered in the
// client's protocol (its events read by event-facts.ts's reader).

/**
 * Renders one stream's parts in a client protocol, closing blocks at their ends (state:
 * the open block, tool-call ids, usage). It is given choice 0's parts only (see readParts).
 */
export interface StreamRenderer {
  /** The client bytes for these parts ('' for none). The protocol's opening comes with the first content. */
  render(parts: readonly StreamPart[]): string;
  /** The answer is complete: what closes it (the finish, usage, the terminator). */
  end(): string;
  /** The stream cannot go on: this protocol's error event. */
  error(message: string): string;
}

/**
 * A same-protocol stream a renderer may have to go on with in the middle of the answer (a tool
 * call written as text after text already relayed, see tool-text/): told each event that went
 * out as its bytes, it keeps what the client saw of ids, open blocks, indexes and sequence
 * numbers, and makes a renderer that carries on from there, as if it had drawn the whole stream.
 */
export interface RelayHandover {
  /** One event that reached the client as its upstream bytes: its parsed JSON and its parts. */
  relayed(json: unknown, parts: readonly StreamPart[]): void;
  /** A renderer that goes on where the relayed bytes left the client. */
  renderer(): StreamRenderer;
}

/** A special return of StreamOutput.event: forward the event's own upstream bytes. */
export const RAW = Symbol('raw');

/**
 * How one committed stream's upstream events reach the client: relayed as their bytes, or
 * rendered in the client's protocol. Before commit the attempt holds what this returns.
 */
export interface StreamOutput {
  /** Whether events reach the client as their own bytes (the byte relay). */
  readonly relays: boolean;
  /** What the client gets for one read, well-formed event (`raw`: its upstream bytes): RAW, bytes, or null (nothing). */
  event(facts: EventFacts, raw: Buffer): typeof RAW | Buffer | null;
  /** A comment or field-less event (keep-alive), after commit: its bytes, or null. */
  keepAlive(raw: Buffer): Buffer | null;
  /** The answer is complete (`terminated`: the upstream sent its terminator): what ends the client's stream well. */
  complete(terminated: boolean): Buffer | null;
  /** The upstream reported an error after commit: the client's last event (the upstream's own when relayed). */
  upstreamError(raw: Buffer, facts: EventFacts): Buffer;
  /** The stream cannot go on (a stall, a break): the client protocol's error event. */
  interrupted(message: string): Buffer;
}
