import { describe, expect, it } from 'vitest';
import { HISTOGRAM_BUCKETS, histogram, mean, round, spread } from '../../../src/bench-command/stats.js';

describe('spread', () => {
  it('gives observed values (nearest rank) to 0.1 ms, whatever the order of the samples', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i + 0.04); // 100.04 … 1.04, descending
    expect(spread(values)).toEqual({ p50: 50, p95: 95, p99: 99, min: 1, max: 100 });
    expect(spread([12.345])).toEqual({ p50: 12.3, p95: 12.3, p99: 12.3, min: 12.3, max: 12.3 });
  });

  it('is all null without a sample, and leaves the samples as they were', () => {
    expect(spread([])).toEqual({ p50: null, p95: null, p99: null, min: null, max: null });
    const values = [3, 1, 2];
    spread(values);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('histogram', () => {
  it('splits min to max into equal buckets, the last including the maximum', () => {
    const buckets = histogram([0, 10, 20, 30, 40, 50, 60, 70, 80], 8);
    expect(buckets).toHaveLength(8);
    expect(buckets[0]).toEqual({ from_ms: 0, to_ms: 10, count: 1 });
    expect(buckets[7]).toEqual({ from_ms: 70, to_ms: 80, count: 2 });
    expect(buckets.reduce((sum, b) => sum + b.count, 0)).toBe(9);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i].from_ms).toBe(buckets[i - 1].to_ms);
  });

  it('gives one bucket to values all equal, and none to no values', () => {
    expect(histogram([5, 5, 5])).toEqual([{ from_ms: 5, to_ms: 5, count: 3 }]);
    expect(histogram([])).toEqual([]);
    expect(histogram([1, 2])).toHaveLength(HISTOGRAM_BUCKETS);
  });
});

describe('mean and round', () => {
  it('average, null for nothing; round to a tenth', () => {
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(mean([])).toBeNull();
    expect(round(1.25)).toBe(1.3);
    expect(round(1.24)).toBe(1.2);
    expect(round(-0.04)).toBe(-0);
  });
});
