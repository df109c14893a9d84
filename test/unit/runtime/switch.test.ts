import { afterEach, describe, expect, it, vi } from 'vitest';
import { QUIET_MS, settleWhenQuiet } from '../../../src/runtime/settle-when-quiet.js';
import { tuningOff } from '../../../src/runtime/switch.js';

describe('the start-up tuning switch (src/runtime/switch.ts)', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.useRealTimers();
  });

  it('LLM_ROUTE_NO_TUNING=1 turns every piece off, a list only the pieces it names, anything else none', () => {
    const pieces = ['bundle', 'compile-cache', 'zod', 'wasm-tier', 'gc-when-quiet'] as const;
    expect(pieces.filter((piece) => tuningOff(piece, { LLM_ROUTE_NO_TUNING: '1' }))).toEqual([...pieces]);
    expect(pieces.filter((piece) => tuningOff(piece, { LLM_ROUTE_NO_TUNING: 'zod,gc-when-quiet' }))).toEqual(['zod', 'gc-when-quiet']);
    for (const env of [{}, { LLM_ROUTE_NO_TUNING: '' }, { LLM_ROUTE_NO_TUNING: '0' }, { LLM_ROUTE_NO_TUNING: 'true' }]) {
      expect(pieces.filter((piece) => tuningOff(piece, env))).toEqual([]);
    }
  });

  it('switched off, settleWhenQuiet never collects however long the thread is quiet (on, it does)', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const collectsWhileQuiet = (): number => {
      let collects = 0;
      const stop = settleWhenQuiet({ lastActive: () => 1_000_000 }, { collect: () => collects++, heapBytes: () => 50 * 1024 * 1024 });
      vi.advanceTimersByTime(QUIET_MS * 10);
      stop();
      return collects;
    };
    expect(collectsWhileQuiet()).toBe(1);
    vi.stubEnv('LLM_ROUTE_NO_TUNING', 'gc-when-quiet');
    expect(collectsWhileQuiet()).toBe(0);
  });
});
