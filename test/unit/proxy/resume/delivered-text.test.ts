import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { newFacts, readParts } from '../../../../src/protocols/core/event-facts.js';
import { DeliveredText } from '../../../../src/proxy/resume/delivered-text.js';

/** Where a resume may take a stream on (and so where a resume route's learned stall may cut it): inside a text run only. */
function deliveredAfter(events: StreamPart[][]): DeliveredText {
  const delivered = new DeliveredText(readParts);
  const facts = newFacts();
  for (const parts of events) {
    facts.parts = parts;
    delivered.decode(facts, []);
  }
  return delivered;
}

const text = (delta: string): StreamPart[] => [{ type: 'text-delta', id: 't', delta }];

describe('DeliveredText.resumable', () => {
  it('inside a text run: yes, and it keeps the text', () => {
    const delivered = deliveredAfter([[{ type: 'text-start', id: 't' }], text('Hello'), text(' world')]);
    expect(delivered.resumable).toBe(true);
    expect(delivered.text()).toBe('Hello world');
    expect(delivered.pieces).toBe(2);
  });

  it('before any text, or with reasoning last: no', () => {
    expect(deliveredAfter([]).resumable).toBe(false);
    expect(deliveredAfter([text('Hi'), [{ type: 'reasoning-delta', id: 'r', delta: 'hm' }]]).resumable).toBe(false);
  });

  it('once the stream made a tool call: never again', () => {
    const delivered = deliveredAfter([text('Let me look.'), [{ type: 'tool-input-start', id: 'c', toolName: 'ls' }], text(' Done.')]);
    expect(delivered.resumable).toBe(false);
  });

  it('with content only its wire carries last (a hosted tool at work, which may be silent for seconds): no; text after it: yes', () => {
    expect(deliveredAfter([text('Searching.'), [{ type: 'opaque' }]]).resumable).toBe(false);
    expect(deliveredAfter([text('Searching.'), [{ type: 'opaque' }], text(' Found it.')]).resumable).toBe(true);
  });

  it('once the answer has finished: no (a stall or break before the terminator has nothing left to continue)', () => {
    expect(deliveredAfter([text('All done.'), [{ type: 'finish', reason: 'stop' }]]).resumable).toBe(false);
  });
});
