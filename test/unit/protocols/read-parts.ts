import { clientCodec, wireCodec } from '../../../src/protocols/registry.js';
import type { StreamPart } from '../../../src/protocols/core/stream-part.js';
import type { WireProtocol } from '../../../src/protocols/core/types.js';
import { EVENT_CONTENT, type EventFacts, newFacts } from '../../../src/protocols/core/event-facts.js';
import { TranslatedOutput } from '../../../src/protocols/stream-output/translated-output.js';

/**
 * Each wire's reader, for the reader tests of each protocol room (chat/, messages/, responses/,
 * ollama/, gemini/): every event decoded once into parts (blocks with start / delta / end and ids), and
 * the commit facts read from those same parts; and a stream rendered for a client of another
 * protocol (stream-output/).
 */

export interface Read {
  parts: StreamPart[];
  flags: number[];
  texts: Array<string | undefined>;
}

/** Reads each data payload in turn with one reader, as one stream. */
export function read(protocol: WireProtocol, payloads: unknown[]): Read {
  const reader = wireCodec(protocol).reader();
  const facts = newFacts();
  const out: Read = { parts: [], flags: [], texts: [] };
  for (const payload of payloads) {
    reader.read(typeof payload === 'string' ? payload : JSON.stringify(payload), facts);
    out.parts.push(...facts.parts);
    out.flags.push(facts.flags);
    out.texts.push(facts.text);
  }
  return out;
}

/** Whether an event's flags commit the stream (content arrived). */
export const committed = (flags: number): boolean => (flags & EVENT_CONTENT) !== 0;

/** A stream of `wire` payloads rendered for a `client` client. */
export function render(client: 'chat' | 'messages' | 'responses', wire: WireProtocol, payloads: unknown[]): string {
  const codec = clientCodec(client);
  const body = client === 'responses' ? { model: 'r', input: 'x', stream: true } : { model: 'r', messages: [], stream: true };
  const parsed = codec.parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const output = new TranslatedOutput(codec.renderer(parsed.request, parsed.request.model));
  const reader = wireCodec(wire).reader();
  const facts: EventFacts = newFacts();
  let out = '';
  for (const payload of payloads) {
    reader.read(typeof payload === 'string' ? payload : JSON.stringify(payload), facts);
    out += output.event(facts)?.toString() ?? '';
  }
  return out + output.complete().toString();
}
