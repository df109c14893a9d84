/**
 * Wall time and one-shot timers, passed in where control-plane logic waits (cooldowns, TTLs,
 * restores), so a test can move time on instead of sleeping through it.
 */
export interface Clock {
  /** Epoch ms. */
  now(): number;
  /** Runs `fn` once after `ms`, without keeping the process alive; returns what cancels it. */
  after(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
