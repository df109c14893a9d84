import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/mock/random.js';
import { GapMedian } from '../../../src/proxy/gap-median.js';

/** The lower median, exactly: what the histogram approximates. */
function exactMedian(gaps: number[]): number {
  const sorted = [...gaps].sort((x, y) => x - y);
  return sorted[(sorted.length - 1) >> 1];
}

describe('GapMedian', () => {
  it('is 0 before any gap, and the one gap after one', () => {
    const median = new GapMedian();
    expect(median.gaps).toBe(0);
    expect(median.medianMs).toBe(0);
    median.add(30);
    expect(median.gaps).toBe(1);
    expect(median.medianMs).toBeCloseTo(30, -1);
    expect(Math.abs(median.medianMs / 30 - 1)).toBeLessThan(0.045);
  });

  it.each([
    ['a token every 15 ms with jitter', (r: () => number) => 10 + r() * 10],
    ['a CPU model at 2 tokens/s, jittered', (r: () => number) => 250 + r() * 500],
    ['bursts: events of one read (0 ms) among gaps of 40 ms', (r: () => number) => (r() < 0.4 ? 0 : 30 + r() * 20)],
    ['heavy tails: mostly 20 ms, now and then seconds', (r: () => number) => (r() < 0.05 ? 1_000 + r() * 5_000 : 15 + r() * 10)],
    ['a pace that slows down as the answer grows', (r: () => number, i: number) => 20 + i * 0.5 + r() * 5],
  ])('follows the exact median within a bin (4.5%%) at every step: %s', (_name, gapAt) => {
    const random = createRandom(7);
    const median = new GapMedian();
    const gaps: number[] = [];
    for (let i = 0; i < 600; i++) {
      const gap = gapAt(random, i);
      gaps.push(gap);
      median.add(gap);
      const exact = exactMedian(gaps);
      if (exact <= 0.125) expect(median.medianMs).toBeLessThan(0.14);
      else expect(Math.abs(median.medianMs / exact - 1)).toBeLessThan(0.045);
    }
    expect(median.gaps).toBe(600);
  });

  it('keeps gaps beyond its range in its end bins instead of failing', () => {
    const median = new GapMedian();
    median.add(-5); // a clock that stepped back: as short as can be
    median.add(1e12);
    median.add(1e12);
    expect(median.medianMs).toBeGreaterThan(500_000);
    expect(Number.isFinite(median.medianMs)).toBe(true);
  });
});
