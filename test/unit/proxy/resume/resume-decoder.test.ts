import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { newFacts, type PartStage } from '../../../../src/protocols/core/event-facts.js';
import { ResumeDecoder, type ResumeMeans } from '../../../../src/proxy/resume/resume-decoder.js';
import { eventsOf, partsOf, type NeutralEvent } from '../../../helpers/stream-events.js';

/** A stage whose parts are the test's: each `feed` is one upstream event. */
class Scripted implements PartStage {
  next: NeutralEvent[] = [];
  decode(_facts: unknown, out: StreamPart[]): void {
    out.push(...partsOf(this.next));
  }
}

function run(means: ResumeMeans, delivered: string, events: NeutralEvent[][]): { out: NeutralEvent[]; diverged: string | null } {
  const inner = new Scripted();
  let diverged: string | null = null;
  const decoder = new ResumeDecoder(inner, means, delivered, (message) => (diverged = message));
  const out: StreamPart[] = [];
  for (const batch of events) {
    inner.next = batch;
    decoder.decode(newFacts(), out);
  }
  return { out: eventsOf(out), diverged };
}

const text = (delta: string): NeutralEvent => ({ type: 'text', delta });
const textOf = (events: NeutralEvent[]): string => events.map((e) => (e.type === 'text' ? e.delta : '')).join('');

describe('ResumeDecoder, replay', () => {
  it('relays only what goes past the delivered prefix, whatever the chunking', () => {
    const { out, diverged } = run('replay', 'Hello wor', [[text('Hel')], [text('lo w')], [text('orld')], [text('!')], [{ type: 'finish', reason: 'stop' }]]);
    expect(diverged).toBeNull();
    expect(textOf(out)).toBe('ld!');
    expect(out.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
  });

  it('a differing character is a divergence, and nothing after it is relayed', () => {
    const { out, diverged } = run('replay', 'Hello world', [[text('Hello')], [text(' there, world')], [text('!')]]);
    expect(diverged).toMatch(/character 6/);
    expect(out).toEqual([]);
  });

  it('a replay that finishes (or calls a tool) before repeating the whole prefix is a divergence', () => {
    expect(run('replay', 'Hello world', [[text('Hello')], [{ type: 'finish', reason: 'stop' }]]).diverged).toMatch(/after 5 of the 11/);
    expect(run('replay', 'Hi', [[{ type: 'tool_call_start', index: 0, id: 'c', name: 'ls' }]]).diverged).not.toBeNull();
  });

  it('reasoning is never relayed; usage passes', () => {
    const { out } = run('replay', 'A', [[{ type: 'reasoning', delta: 'hmm' }], [text('AB')], [{ type: 'usage', usage: { prompt_tokens: 3 } }]]);
    expect(out).toEqual([text('B'), { type: 'usage', usage: { prompt_tokens: 3 } }]);
  });
});

describe('ResumeDecoder, continuation', () => {
  it('relays the continuation as it comes', () => {
    expect(textOf(run('continue', 'Hello ', [[text('world')], [text('!')]]).out)).toBe('world!');
  });

  it('drops the prefill streamed back first (llama-server sends it as one chunk), in one piece or several', () => {
    expect(textOf(run('continue', 'Hello ', [[text('Hello ')], [text('world')]]).out)).toBe('world');
    expect(textOf(run('continue', 'Hello ', [[text('Hel')], [text('lo wor')], [text('ld')]]).out)).toBe('world');
  });

  it('a continuation that only starts like the delivered text is relayed whole', () => {
    expect(textOf(run('continue', 'Hello there', [[text('Hel')], [text('icopter')]]).out)).toBe('Helicopter');
    const { out } = run('continue', 'Hello there', [[text('He')], [{ type: 'finish', reason: 'stop' }]]);
    expect(out).toEqual([text('He'), { type: 'finish', reason: 'stop' }]);
  });
});
