import { percentile } from '../util/percentile.js';

/** One observation of a tier: when, its TTFT (null for non-streams and failures), whether it failed. */
interface Sample {
  at: number;
  ttftMs: number | null;
  failed: boolean;
}

export interface WindowStats {
  requests: number;
  errors: number;
  errorRate: number;
  ttft: { p50: number; p95: number; p99: number; samples: number } | null;
}

/**
 * The last `windowMs` of a tier's outcomes (at most `capacity` of them), in a ring buffer:
 * O(1) to add, percentiles computed only when someone asks.
 */
export class RollingWindow {
  private readonly samples: Array<Sample | undefined>;
  private next = 0;

  constructor(
    private readonly windowMs: number,
    private readonly capacity = 512,
  ) {
    this.samples = new Array<Sample | undefined>(capacity);
  }

  add(at: number, ttftMs: number | null, failed: boolean): void {
    this.samples[this.next] = { at, ttftMs, failed };
    this.next = (this.next + 1) % this.capacity;
  }

  clear(): void {
    this.samples.fill(undefined);
  }

  stats(now: number): WindowStats {
    const from = now - this.windowMs;
    const ttfts: number[] = [];
    let requests = 0;
    let errors = 0;
    for (const s of this.samples) {
      if (s === undefined || s.at < from) continue;
      requests++;
      if (s.failed) errors++;
      if (s.ttftMs !== null) ttfts.push(s.ttftMs);
    }
    ttfts.sort((a, b) => a - b);
    return {
      requests,
      errors,
      errorRate: requests === 0 ? 0 : errors / requests,
      ttft: ttfts.length === 0 ? null : { p50: percentile(ttfts, 50), p95: percentile(ttfts, 95), p99: percentile(ttfts, 99), samples: ttfts.length },
    };
  }
}
