import v8 from 'node:v8';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QUIET_MS, settleWhenQuiet } from '../../../src/runtime/settle-when-quiet.js';

// The timer and Date.now() are vitest's fake ones: time moves only when a test moves it.
describe('settleWhenQuiet', () => {
  let lastActive: number;
  let busy: boolean;
  let heap: number;
  let collects: number;
  let stop: () => void;
  const MB = 1024 * 1024;

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    lastActive = Date.now();
    busy = false;
    heap = 30 * MB;
    collects = 0;
    stop = settleWhenQuiet(
      { lastActive: () => lastActive, busy: () => busy },
      {
        collect: () => {
          collects++;
          heap = 20 * MB;
        },
        heapBytes: () => heap,
      },
    );
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
  });

  const arrive = (): void => {
    lastActive = Date.now();
  };

  it('collects once, QUIET_MS to QUIET_MS + 0.5 s after the last activity, and not again while nothing happens', () => {
    vi.advanceTimersByTime(QUIET_MS - 1);
    expect(collects).toBe(0);
    vi.advanceTimersByTime(501);
    expect(collects).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(collects).toBe(1);
  });

  it('waits while activity goes on, and while work is under way with nothing new arriving', () => {
    for (let i = 0; i < 10; i++) {
      vi.advanceTimersByTime(QUIET_MS - 100);
      arrive();
    }
    expect(collects).toBe(0);
    busy = true; // a long stream: no arrivals, but not idle
    vi.advanceTimersByTime(30_000);
    expect(collects).toBe(0);
    busy = false;
    vi.advanceTimersByTime(500);
    expect(collects).toBe(1);
  });

  it('settles again after new activity only once the heap has grown 2 MB past the last settle', () => {
    vi.advanceTimersByTime(QUIET_MS + 500);
    expect(collects).toBe(1);
    // A request that left little behind (a metrics scrape): no second GC for it.
    arrive();
    heap = 21 * MB;
    vi.advanceTimersByTime(QUIET_MS + 500);
    expect(collects).toBe(1);
    // The heap keeps growing while quiet (the tokenizer loading after the request, say): it is
    // looked at again on each tick.
    heap = 22 * MB + 1;
    vi.advanceTimersByTime(500);
    expect(collects).toBe(2);
  });

  it('stops when told', () => {
    stop();
    vi.advanceTimersByTime(60_000);
    expect(collects).toBe(0);
  });
});

// Node 20's V8 (11.3) reads gc()'s options as a minor GC and its memory reducer shrinks the young
// generation after ~8 s of quiet by itself; Node 22 and 24 take the "last resort" full GC.
const V8_MAJOR = Number(process.versions.v8.split('.')[0]);

describe('settleWhenQuiet with V8 itself', () => {
  const youngBytes = (): number => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;

  it.skipIf(V8_MAJOR < 12)('gives back the young generation this thread grew, and leaves no gc global behind', async () => {
    // Grow the young generation: objects that survive a few scavenges.
    const keep: object[][] = [];
    for (let round = 0; round < 20 && youngBytes() < 4 * 1024 * 1024; round++) keep.push(Array.from({ length: 50_000 }, (_, i) => ({ i })));
    keep.length = 0;
    const grown = youngBytes();
    expect(grown).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    const stop = settleWhenQuiet({ lastActive: () => Date.now() - QUIET_MS });
    try {
      await vi.waitFor(() => expect(youngBytes()).toBeLessThan(1024 * 1024), { timeout: 5_000, interval: 50 });
    } finally {
      stop();
    }
    expect('gc' in globalThis).toBe(false);
  });
});
