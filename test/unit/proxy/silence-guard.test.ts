import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_STALL, type StallConfig } from '../../../src/config/schema.js';
import type { AttemptError } from '../../../src/proxy/attempt-error.js';
import { SilenceGuard } from '../../../src/proxy/silence-guard.js';
import { createRandom } from '../../../src/mock/random.js';

/**
 * SilenceGuard on vitest's fake clock (timers and performance.now() move together, so every
 * limit is checked to the millisecond): idle_ms alone (on_break: error), and the learned stall
 * of a resume route, against steady, jittered and stalling cadences.
 */

interface Guarded {
  guard: SilenceGuard;
  ended: AttemptError[];
  state: { mendable: boolean; paused: boolean };
}

function guarded(idleMs: number, stall: StallConfig | null = DEFAULT_STALL): Guarded {
  const ended: AttemptError[] = [];
  const state = { mendable: true, paused: false };
  const watch = stall ? { rule: stall, mendable: () => state.mendable } : undefined;
  const guard = new SilenceGuard(
    idleMs,
    watch,
    () => state.paused,
    (err) => ended.push(err),
  );
  return { guard, ended, state };
}

/** Content every `gapMs` (a number, or a function of the gap's index), `count` times. */
function flow(g: Guarded, count: number, gapMs: number | ((i: number) => number)): void {
  for (let i = 0; i < count; i++) {
    vi.advanceTimersByTime(typeof gapMs === 'number' ? gapMs : gapMs(i));
    expect(g.ended).toEqual([]);
    g.guard.progress();
  }
}

/** Advances the clock ms by ms until the guard ends the stream; how long that took. */
function silenceUntilEnded(g: Guarded, atMostMs: number): number {
  for (let ms = 1; ms <= atMostMs; ms++) {
    vi.advanceTimersByTime(1);
    if (g.ended.length > 0) return ms;
  }
  return Infinity;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  // The setTimeout spy first: it wraps the fake clock's, and left in place it outlives
  // useRealTimers (a later file in the same worker would get timers that never fire).
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('idle_ms (every stream)', () => {
  it('ends the stream exactly idle_ms after the last content, whatever the pace before', () => {
    const g = guarded(3_000, null);
    flow(g, 50, (i) => 20 + (i % 7) * 300);
    expect(silenceUntilEnded(g, 10_000)).toBe(3_000);
    expect(g.ended[0]).toMatchObject({ reason: 'idle_timeout', phase: 'idle', message: 'no content within 3000 ms' });
  });

  it.each([
    ['idle_ms alone', null, 3_000],
    ['with the learned stall', DEFAULT_STALL, DEFAULT_STALL.floor_ms],
  ])('arms no timer per content (%s): one at the start, one more each time the limit comes round', (_name, stall, limitMs) => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const g = guarded(3_000, stall);
    flow(g, 1_000, 15); // 15 s of content every 15 ms
    // Once the pace is known the stall moves the timer up, once.
    expect(setTimeoutSpy.mock.calls.length).toBeLessThanOrEqual(2 + Math.ceil(15_000 / limitMs));
    g.guard.stop();
  });

  it("a client that is not reading pauses the upstream: that silence is not the stream's; reading again restarts it", () => {
    const g = guarded(3_000, null);
    flow(g, 5, 100);
    g.state.paused = true;
    vi.advanceTimersByTime(20_000);
    expect(g.ended).toEqual([]);
    g.state.paused = false;
    g.guard.restart();
    expect(silenceUntilEnded(g, 10_000)).toBe(3_000);
  });

  it('stop() ends the watch: nothing fires after', () => {
    const g = guarded(3_000);
    flow(g, 30, 10);
    g.guard.stop();
    vi.advanceTimersByTime(60_000);
    expect(g.ended).toEqual([]);
  });
});

describe('the learned stall (on_break: resume)', () => {
  it('a token stream every 15 ms that stops is a stall at stall.floor_ms (2 s), not at idle_ms', () => {
    const g = guarded(30_000);
    flow(g, 20, 15);
    expect(silenceUntilEnded(g, 40_000)).toBe(2_000);
    expect(g.ended[0]).toMatchObject({ reason: 'stall_timeout', phase: 'idle', timedOut: true });
    expect(g.ended[0].message).toMatch(
      /^stalled: no content for 2000 ms where this stream's median gap was 1[45](\.\d)? ms \(stall: factor 20, floor_ms 2000\)$/,
    );
  });

  it('a slower stream gets stall.factor times its own median gap', () => {
    const g = guarded(30_000);
    flow(g, 20, 200);
    const ms = silenceUntilEnded(g, 40_000);
    expect(ms).toBeGreaterThanOrEqual(Math.floor(4_000 * 0.955));
    expect(ms).toBeLessThanOrEqual(Math.ceil(4_000 * 1.045));
    expect(g.ended[0].reason).toBe('stall_timeout');
  });

  it('needs stall.after gaps first: 15 gaps wait for idle_ms, 16 are judged by their pace', () => {
    // The guard starts at the commit, the stream's first content: each content after it ends a gap.
    const fewer = guarded(30_000);
    flow(fewer, 15, 15);
    expect(silenceUntilEnded(fewer, 40_000)).toBe(30_000);
    expect(fewer.ended[0].reason).toBe('idle_timeout');
    const enough = guarded(30_000);
    flow(enough, 16, 15);
    expect(silenceUntilEnded(enough, 40_000)).toBe(2_000);
  });

  it('reads its settings: factor, floor_ms, after', () => {
    const g = guarded(30_000, { factor: 5, floor_ms: 500, after: 4 });
    flow(g, 4, 300);
    const ms = silenceUntilEnded(g, 40_000);
    expect(ms).toBeGreaterThanOrEqual(Math.floor(1_500 * 0.955));
    expect(ms).toBeLessThanOrEqual(Math.ceil(1_500 * 1.045));
  });

  it('a limit above idle_ms leaves idle_ms the limit', () => {
    const g = guarded(5_000);
    flow(g, 20, 1_000); // 20 × 1 s = 20 s > 5 s
    expect(silenceUntilEnded(g, 40_000)).toBe(5_000);
    expect(g.ended[0].reason).toBe('idle_timeout');
  });

  it('is never called where a resume could not mend the stream (a tool call, reasoning): idle_ms still is', () => {
    const g = guarded(30_000);
    flow(g, 20, 15);
    g.state.mendable = false;
    expect(silenceUntilEnded(g, 40_000)).toBe(30_000);
    expect(g.ended[0].reason).toBe('idle_timeout');
  });

  it('once mendable again, the stall is judged from the next content on', () => {
    const g = guarded(30_000);
    flow(g, 20, 15);
    g.state.mendable = false;
    vi.advanceTimersByTime(5_000); // past the stall: not mendable, the timer waits for idle_ms
    g.state.mendable = true;
    g.guard.progress();
    expect(silenceUntilEnded(g, 40_000)).toBe(2_000);
  });

  it('a quickened pace brings the stall forward: the timer moves up, never late', () => {
    const g = guarded(30_000);
    flow(g, 17, 600); // limit 12 s
    flow(g, 60, 10); // the median falls to 10 ms: the limit to the floor
    expect(silenceUntilEnded(g, 40_000)).toBe(2_000);
  });

  it('a client that is not reading is no stall', () => {
    const g = guarded(30_000);
    flow(g, 20, 15);
    g.state.paused = true;
    vi.advanceTimersByTime(10_000);
    expect(g.ended).toEqual([]);
    g.state.paused = false;
    g.guard.restart();
    expect(silenceUntilEnded(g, 40_000)).toBe(2_000);
  });
});

describe('healthy streams are never cut by the defaults', () => {
  it('a CPU model at 2 tokens/s, jittered (0.25–0.75 s), with thinking pauses up to 6 s: 400 tokens, never cut', () => {
    const random = createRandom(55);
    const g = guarded(30_000);
    flow(g, 400, (i) => (i % 50 === 49 ? 3_000 + random() * 3_000 : 250 + random() * 500));
    // …and once it does stop, its own pace says so well before idle_ms.
    const ms = silenceUntilEnded(g, 40_000);
    expect(ms).toBeGreaterThan(8_000);
    expect(ms).toBeLessThan(12_000);
  });

  it('a fast stream (10–60 ms) pausing under stall.floor_ms (1.9 s) now and then: never cut', () => {
    const random = createRandom(9);
    const g = guarded(30_000);
    flow(g, 1_000, (i) => (i % 100 === 99 ? 1_900 : 10 + random() * 50));
    expect(silenceUntilEnded(g, 40_000)).toBe(2_000);
  });

  it('a model that starts fast and slows to a crawl (prompt processing of others on its server): never cut while it keeps coming', () => {
    const g = guarded(30_000);
    flow(g, 40, 20);
    flow(g, 20, (i) => 1_000 + i * 40); // up to ~1.8 s a token: under the floor
    expect(g.ended).toEqual([]);
  });
});
