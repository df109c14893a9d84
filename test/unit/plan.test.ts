import { createRandom } from '../../src/mock/random.js';
import { describe, expect, it } from 'vitest';
import type { Tier } from '../../src/config/schema.js';
import type { TierGate } from '../../src/health/health-view.js';
import { planTiers } from '../../src/proxy/plan.js';
import { route, tier } from '../helpers/config.js';

type Gate = Pick<TierGate, 'weight' | 'admit'>;
const configured = (t: Tier): number => t.weight;
const allHealthy: Gate = { weight: configured, admit: () => true };
const downSet = (...names: string[]): Gate => ({ weight: configured, admit: (t) => !names.includes(t.name) });
const names = (plan: { tiers: { name: string }[] }): string[] => plan.tiers.map((t) => t.name);

describe('planTiers', () => {
  it('keeps the route order, never reordered', () => {
    const r = route([tier('a'), tier('b'), tier('c')]);
    expect(names(planTiers(r, allHealthy))).toEqual(['a', 'b', 'c']);
  });

  it('leaves out a tier with weight 0 and always keeps weight 100', () => {
    const r = route([tier('a', { weight: 0 }), tier('b'), tier('c', { weight: 0 })]);
    expect(names(planTiers(r, allHealthy, () => 0))).toEqual(['b']);
  });

  it('draws once per weighted tier: the observed split matches the weight (5% ± 1% over 10,000 plans)', () => {
    const r = route([tier('canary', { weight: 5 }), tier('main')]);
    const random = createRandom(42); // seeded, so the split is repeatable
    let canary = 0;
    for (let i = 0; i < 10_000; i++) {
      const plan = names(planTiers(r, allHealthy, random));
      if (plan[0] === 'canary') canary++;
      expect(plan.at(-1)).toBe('main'); // a lost draw removes the tier, the rest stays
    }
    expect(canary / 10_000).toBeGreaterThan(0.04);
    expect(canary / 10_000).toBeLessThan(0.06);
  });

  it('skips tiers that are down', () => {
    const r = route([tier('a'), tier('b'), tier('c')]);
    expect(names(planTiers(r, downSet('a')))).toEqual(['b', 'c']);
    expect(names(planTiers(r, downSet('b')))).toEqual(['a', 'c']);
  });

  it('keeps every tier when all of them are down, and says so', () => {
    const r = route([tier('a'), tier('b')]);
    expect(planTiers(r, downSet('a', 'b'))).toMatchObject({ allDown: true });
    expect(names(planTiers(r, downSet('a', 'b')))).toEqual(['a', 'b']);
    expect(planTiers(r, downSet('a')).allDown).toBe(false);
  });

  it("uses the gate's weight (a runtime override), not only the configured one", () => {
    const r = route([tier('a'), tier('b')]);
    const killA: Gate = { weight: (t) => (t.name === 'a' ? 0 : t.weight), admit: () => true };
    expect(names(planTiers(r, killA))).toEqual(['b']);
  });

  it('asks admit only of tiers that won their draw (a half-open trial is not claimed for nothing)', () => {
    const asked: string[] = [];
    const r = route([tier('a', { weight: 0 }), tier('b')]);
    planTiers(r, {
      weight: configured,
      admit: (t) => {
        asked.push(t.name);
        return true;
      },
    });
    expect(asked).toEqual(['b']);
  });

  it('returns an empty plan when every tier lost its draw', () => {
    const r = route([tier('a', { weight: 0 })]);
    expect(planTiers(r, allHealthy)).toEqual({ tiers: [], allDown: false });
  });
});
