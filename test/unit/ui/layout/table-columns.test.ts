import { describe, expect, it } from 'vitest';
import { chooseColumns, totalWidth } from '../../../../src/ui/layout/table-columns.js';

describe('table columns', () => {
  const content = { tier: 6, model: 19, weight: 10 };
  const keys = (width: number): string[] => chooseColumns(width, content).map((c) => c.key);

  it('drop the trend, then the cache hit rate, then provider/model, then p95', () => {
    expect(keys(200)).toContain('trend');
    expect(keys(110)).not.toContain('trend');
    expect(keys(110)).toContain('cache');
    expect(keys(100)).not.toContain('cache');
    expect(keys(100)).toContain('model');
    expect(keys(80)).not.toContain('model');
    expect(keys(80)).toContain('p95');
    expect(keys(60)).not.toContain('p95');
    expect(keys(60)).toContain('p99');
  });

  it('keep everything on a 125-column terminal; with an admin override and its time left, all but the context', () => {
    expect(keys(125)).toHaveLength(15);
    const overridden = chooseColumns(125, { ...content, weight: '10 (admin, 3m left)'.length }).map((c) => c.key);
    expect(overridden).toContain('trend');
    expect(overridden).not.toContain('context');
  });

  it('drop the context column first', () => {
    expect(keys(125)).toContain('context');
    expect(keys(120)).not.toContain('context');
    expect(keys(120)).toContain('trend');
  });

  it('fit the width they were chosen for whenever they can', () => {
    for (const width of [70, 80, 100, 110, 120, 125, 200]) expect(totalWidth(chooseColumns(width, content))).toBeLessThanOrEqual(width);
  });
});
