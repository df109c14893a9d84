import { percentile } from '../util/percentile.js';

/** Order statistics of one metric over the successful requests of a tier. */
export interface Spread {
  p50: number | null;
  p95: number | null;
  p99: number | null;
  min: number | null;
  max: number | null;
}

export interface HistogramBucket {
  from_ms: number;
  to_ms: number;
  count: number;
}

export const HISTOGRAM_BUCKETS = 8;

/** p50/p95/p99 (nearest rank: observed values, as the proxy and the dashboard show them)/min/max, rounded to 0.1 ms; all null when there is no sample. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { p50: null, p95: null, p99: null, min: null, max: null };
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    min: round(sorted[0]),
    max: round(sorted[sorted.length - 1]),
  };
}

/**
 * Equal-width buckets from the smallest to the largest value; the last bucket includes the
 * maximum. Values all equal give one bucket, since equal widths of zero would say nothing.
 */
export function histogram(values: readonly number[], buckets = HISTOGRAM_BUCKETS): HistogramBucket[] {
  if (values.length === 0) return [];
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const value of values) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  if (max === min) return [{ from_ms: round(min), to_ms: round(max), count: values.length }];
  const width = (max - min) / buckets;
  const counts = new Array<number>(buckets).fill(0);
  for (const value of values) counts[Math.min(buckets - 1, Math.floor((value - min) / width))]++;
  return counts.map((count, i) => ({
    from_ms: round(min + i * width),
    to_ms: round(i === buckets - 1 ? max : min + (i + 1) * width),
    count,
  }));
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Milliseconds to one decimal: finer than any network jitter worth reporting. */
export function round(value: number): number {
  return Math.round(value * 10) / 10;
}
