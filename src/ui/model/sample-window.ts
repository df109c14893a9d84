import { percentile } from '../../util/percentile.js';
import { Ring } from './ring.js';

interface Sample {
  at: number;
  value: number;
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  count: number;
}

/**
 * The last `maxSamples` values, of which those younger than `maxAgeMs` count for percentiles.
 * Recording is O(1); percentiles sort at most `maxSamples` values, once per rendered frame.
 */
export class SampleWindow {
  private readonly samples: Ring<Sample>;

  constructor(
    maxSamples = 200,
    private readonly maxAgeMs = 60_000,
  ) {
    this.samples = new Ring(maxSamples);
  }

  record(value: number, at: number): void {
    this.samples.push({ at, value });
  }

  percentiles(now: number): Percentiles | null {
    const values: number[] = [];
    for (const sample of this.samples.newest()) {
      if (now - sample.at > this.maxAgeMs) break; // newest first: the rest are older still
      values.push(sample.value);
    }
    if (values.length === 0) return null;
    values.sort((a, b) => a - b);
    return { p50: percentile(values, 50), p95: percentile(values, 95), p99: percentile(values, 99), count: values.length };
  }

  /** The last `limit` values, oldest first (a sparkline's order), whatever their age. */
  recent(limit: number): number[] {
    return this.samples
      .newest(limit)
      .map((s) => s.value)
      .reverse();
  }
}
