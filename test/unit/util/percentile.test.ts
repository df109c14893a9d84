import { describe, expect, it } from 'vitest';
import { spread } from '../../../src/bench-command/stats.js';
import { RollingWindow } from '../../../src/health/rolling-window.js';
import { SampleWindow } from '../../../src/ui/model/sample-window.js';
import { percentile } from '../../../src/util/percentile.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);

  it('is the smallest value with at least p% of the values at or below it', () => {
    expect(percentile(hundred, 50)).toBe(50);
    expect(percentile(hundred, 95)).toBe(95);
    expect(percentile(hundred, 99)).toBe(99);
    expect(percentile(hundred, 99.5)).toBe(100);
    expect(percentile(hundred, 100)).toBe(100);
    expect(percentile(hundred, 0)).toBe(1);
  });

  it('is always an observed value; with few values the top percentiles are the maximum', () => {
    const five = [120, 130, 150, 400, 2_000];
    expect([50, 95, 99].map((p) => percentile(five, p))).toEqual([150, 2_000, 2_000]);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('is what the health window, the dashboard and the bench report all show', () => {
    const values = [900, 100, 300, 200, 500, 400, 800, 700, 600, 1_000];
    const sorted = [...values].sort((a, b) => a - b);
    const expected = { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
    expect(expected).toEqual({ p50: 500, p95: 1_000, p99: 1_000 });

    const health = new RollingWindow(60_000);
    const dashboard = new SampleWindow(200, 60_000);
    for (const value of values) {
      health.add(0, value, false);
      dashboard.record(value, 0);
    }
    expect(health.stats(0).ttft).toMatchObject(expected);
    expect(dashboard.percentiles(0)).toMatchObject(expected);
    expect(spread(values)).toMatchObject(expected);
  });
});
