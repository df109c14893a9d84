import type { StreamPart } from './stream-part.js';
import type { Usage } from './usage.js';

// What a wire codec's reader makes of each upstream event: its facts (the EVENT_* flags the
// routing core commits and fails over on, usage, text) and its parts, the reader that fills
// them, and the stages between the parts and a renderer (stream-output.ts).

/**
 * What one upstream event means to the router, and its parts for a translation; filled in
 * place by the stream's reader (one facts object and one parts array per stream; the parts
 * themselves are new small objects).
 */
export interface EventFacts {
  /** Bit set of EVENT_* flags. */
  flags: number;
  /** Usage figures this event carries (a piece of them, for protocols that report in pieces). */
  usage: Partial<Usage> | undefined;
  /** Generated text in this event (content, reasoning, tool arguments), for a token estimate. */
  text: string | undefined;
  /** The event's parsed JSON (a relay policy reads a field of it: a sequence number, a chunk id). */
  json: unknown;
  /**
   * The event's parts, decoded once by the stream's reader; the flags above are read from them.
   * The reader's own array, reused for the next event: copy what must outlive this one.
   */
  parts: readonly StreamPart[];
}

export const EVENT_CONTENT = 1; // commits the stream: text, reasoning, a tool call, a finish or opaque content (see part-facts.ts)
export const EVENT_FINISH = 2; // the answer's end reason
export const EVENT_USAGE = 4; // carries usage
export const EVENT_USAGE_ONLY = 8; // nothing but usage (chat: hidden from clients that did not ask)
export const EVENT_ERROR = 16; // an error reported inside the stream
export const EVENT_MALFORMED = 32; // not valid JSON, or not an event of the protocol
export const EVENT_DONE = 64; // the protocol's terminator: nothing meaningful follows
export const EVENT_REWRITTEN = 128; // its parts are not what the upstream's bytes say (a tool call recovered from text): a relay renders from here on
export const EVENT_BAD_TOOL_CALL = 256; // with EVENT_ERROR: a tool call written as text that the client cannot run (src/protocols/tool-text/)
export const EVENT_HELD = 512; // after commit, its text is held back undecided (it may begin a tool call written as text): a relay waits for the next event
export const EVENT_PROGRESS = 1024; // the upstream's event carried content as it came (set with EVENT_CONTENT, kept when a tool-text hold takes the content back): the stream is not silent; a keep-alive never is

const NO_PARTS: readonly StreamPart[] = Object.freeze([]);

export function newFacts(): EventFacts {
  return { flags: 0, usage: undefined, text: undefined, json: undefined, parts: NO_PARTS };
}

/**
 * Reads one stream's events, each once: its data into parts (`facts.parts`), and the commit
 * facts from those parts (flags, usage, text), so what commits a stream and what a translation
 * renders cannot disagree. A relayed stream is read the same way and still goes out as its bytes.
 */
export interface StreamReader {
  read(data: string, facts: EventFacts): void;
  /**
   * A reader that holds content before commit (a tool call written as text, see tool-text/),
   * told that the TTFT budget ended while it held no form: 'released', the reasoning or
   * whitespace it held is in `facts` as one event, to commit now; null: nothing held.
   */
  ttftEnded?(facts: EventFacts): 'released' | null;
  /** Characters of a tool call written as text it holds now (0: none): while one grows, its hold is governed by progress, not by ttft_ms. */
  heldForm?(): number;
  /**
   * The hold of a form was cut (`why`: idle_ms of silence, stream_max_ms, the answer cap):
   * `badCall`, why the attempt fails; 'released' on the last tier the request tries, the text
   * as written in `facts` as one event, to commit now.
   */
  holdEnded?(facts: EventFacts, why: string): { badCall: string } | 'released';
  /** A form the client cannot run waits to know whether the tier is the last the request tries (its fit check is still counting). */
  awaitsLastTier?(): boolean;
  /** That is known now: `badCall`, fail over; 'released', the text as written in `facts`, to commit; null: nothing waited. */
  lastTierKnown?(facts: EventFacts): { badCall: string } | 'released' | null;
}

/**
 * A step between a stream's parts and its renderer (the answer tool turned into text, a
 * resume's echo dropped): appends what it makes of one read event to `out`. `readParts` is
 * the first step of every chain: the event's own parts of choice 0, the only one a
 * translation carries.
 */
export interface PartStage {
  decode(facts: EventFacts, out: StreamPart[]): void;
}

export const readParts: PartStage = {
  decode(facts: EventFacts, out: StreamPart[]): void {
    const parts = facts.parts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (!('choice' in part) || !part.choice) out.push(part);
    }
  },
};
