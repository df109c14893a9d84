/** A source of uniform numbers in [0, 1). */
export type Random = () => number;

/** mulberry32: tiny, fast and good enough for fault dice; the same seed gives the same sequence. */
export function createRandom(seed: number = Math.floor(Math.random() * 2 ** 32)): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A new generator seeded from `parent`, so each request gets its own dice regardless of interleaving. */
export function forkRandom(parent: Random): Random {
  return createRandom(Math.floor(parent() * 2 ** 32));
}
