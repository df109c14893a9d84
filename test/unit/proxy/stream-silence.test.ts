import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STALL } from '../../../src/config/schema.js';
import type { AttemptError } from '../../../src/proxy/attempt-error.js';
import { chunk } from '../../helpers/fake-upstream.js';
import { sseEvent } from '../../helpers/proxy-parts.js';
import { errorMessageOf, type Relayed, relayAfter, turn } from '../../helpers/relay-kit.js';

/**
 * What a committed stream's silence is: time without content. Keep-alives (SSE comments, empty
 * deltas, role-only and usage-only chunks) still reach the client byte for byte, but neither end
 * a silence nor count as a gap of the stream's pace — for idle_ms on every route, and for the
 * learned stall of a resume route. On vitest's fake clock: every limit to the millisecond.
 */

const word = (text: string) => sseEvent(chunk({ content: text }));
const USAGE_ONLY = sseEvent({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
});

/** Each keep-alive, and what of it reaches the client (a usage-only chunk only when the client asked for usage). */
const KEEP_ALIVES: Array<[string, string, string]> = [
  ['an SSE comment', ': keep-alive\n\n', ': keep-alive\n\n'],
  ['an empty delta', sseEvent(chunk({})), sseEvent(chunk({}))],
  ['an empty content delta', sseEvent(chunk({ content: '' })), sseEvent(chunk({ content: '' }))],
  ['a role-only delta', sseEvent(chunk({ role: 'assistant' })), sseEvent(chunk({ role: 'assistant' }))],
  ['a usage-only chunk', USAGE_ONLY, ''],
];

/** Sends `bytes` every `everyMs` until the relay ends (or `forMs` passes); how long it took. */
async function keepSending(r: Relayed, bytes: string, everyMs: number, forMs: number): Promise<number> {
  for (let t = 0; t < forMs; t += 1) {
    await vi.advanceTimersByTimeAsync(1);
    if (r.end()) return t + 1;
    if ((t + 1) % everyMs === 0) r.relay.onBody(Buffer.from(bytes));
  }
  return Infinity;
}

/** `count` chunks of content, `gapMs` apart (each chunk `perChunk` words). */
async function words(r: Relayed, count: number, gapMs: number, perChunk = 1): Promise<void> {
  for (let i = 0; i < count; i++) {
    await vi.advanceTimersByTimeAsync(gapMs);
    r.relay.onBody(Buffer.from(word(' w').repeat(perChunk)));
  }
  await turn();
  expect(r.end()).toBeNull();
}

const stallWatch = (state = { mendable: true }) => ({ rule: DEFAULT_STALL, mendable: () => state.mendable });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe.each(KEEP_ALIVES)('%s every 400 ms after three words', (_name, keepAlive, relayed) => {
  it('on_break: error, idle_ms 3000: the stream ends idle_ms after the last word, the keep-alives relayed until then', async () => {
    const r = relayAfter(word('One'), { timeouts: { idle_ms: 3_000 } });
    await words(r, 2, 50);
    const endedAfter = await keepSending(r, keepAlive, 400, 15_000);
    expect(endedAfter).toBe(3_000);
    expect(r.end()?.interruption).toMatchObject({ reason: 'idle_timeout', phase: 'idle' });
    expect(errorMessageOf(r.sink.ends[0])).toBe('llm-route: no content within 3000 ms');
    // Relayed as they came (7 of them in 3 s), bytes unchanged.
    expect(Buffer.concat(r.sink.writes).toString()).toBe(word('One') + word(' w').repeat(2) + relayed.repeat(7));
  });

  it('on_break: resume: after 20 words at 15 ms, the learned stall ends it at stall.floor_ms (2 s), left open for a recovery', async () => {
    const asked: AttemptError[] = [];
    const r = relayAfter(word('One'), {
      timeouts: { idle_ms: 30_000 },
      keepOpen: (err) => {
        asked.push(err);
        return true;
      },
      stall: stallWatch(),
    });
    await words(r, 19, 15);
    expect(await keepSending(r, keepAlive, 400, 40_000)).toBe(2_000);
    expect(asked.map((err) => err.reason)).toEqual(['stall_timeout']);
    expect(r.end()).toMatchObject({ interruption: { reason: 'stall_timeout' }, open: r.sink });
    expect(r.sink.ends).toEqual([]);
  });
});

describe('what is progress', () => {
  it('words with keep-alives between them: never idle, however long it goes on', async () => {
    const r = relayAfter(word('One'), { timeouts: { idle_ms: 3_000 } });
    for (let i = 0; i < 20; i++) {
      await words(r, 1, 2_900);
      r.relay.onBody(Buffer.from(': keep-alive\n\n'));
    }
    expect(r.end()).toBeNull();
  });

  it('a reasoning delta, a tool call and a finish are progress too', async () => {
    const r = relayAfter(word('One'), { timeouts: { idle_ms: 3_000 } });
    for (const delta of [{ reasoning_content: 'hm' }, { tool_calls: [{ index: 0, id: 'c', function: { name: 'ls', arguments: '' } }] }]) {
      await vi.advanceTimersByTimeAsync(2_900);
      r.relay.onBody(Buffer.from(sseEvent(chunk(delta))));
    }
    await vi.advanceTimersByTimeAsync(2_900);
    r.relay.onBody(Buffer.from(sseEvent(chunk({}, 'stop'))));
    await vi.advanceTimersByTimeAsync(2_900);
    expect(r.end()).toBeNull();
  });

  it("a gap is one chunk's arrival to the next's: ten chunks of three words are ten gaps, short of stall.after (16)", async () => {
    const r = relayAfter(word('One') + word(' two'), { timeouts: { idle_ms: 5_000 }, keepOpen: () => true, stall: stallWatch() });
    await words(r, 10, 15, 3);
    expect(await keepSending(r, ': ping\n\n', 400, 10_000)).toBe(5_000);
    expect(r.end()?.interruption?.reason).toBe('idle_timeout');
  });
});

describe("the learned stall is a resume route's guess, never the only word", () => {
  it('without a stall watch (on_break: error) a stream that came every 15 ms waits the whole idle_ms', async () => {
    const r = relayAfter(word('One'), { timeouts: { idle_ms: 10_000 } });
    await words(r, 40, 15);
    expect(await keepSending(r, ': ping\n\n', 400, 20_000)).toBe(10_000);
    expect(r.end()?.interruption?.reason).toBe('idle_timeout');
  });

  it('a stream a recovery could not mend (inside a tool call, reasoning) is not cut by it: idle_ms ends it', async () => {
    const state = { mendable: false };
    const r = relayAfter(word('One'), { timeouts: { idle_ms: 6_000 }, keepOpen: () => false, stall: stallWatch(state) });
    await words(r, 30, 15);
    expect(await keepSending(r, ': ping\n\n', 400, 20_000)).toBe(6_000);
    expect(r.end()?.interruption?.reason).toBe('idle_timeout');
    expect(errorMessageOf(r.sink.ends[0])).toBe('llm-route: no content within 6000 ms');
  });
});
