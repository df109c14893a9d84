import { createRandom } from '../../../src/mock/random.js';
import { describe, expect, it } from 'vitest';
import type { Tier } from '../../../src/config/schema.js';
import type { TierGate } from '../../../src/health/health-view.js';
import { planTiers } from '../../../src/proxy/plan.js';
import { route, tier } from '../../helpers/config.js';

type Gate = Pick<TierGate, 'weight' | 'allows'>;
const configured = (t: Tier): number => t.weight;
const allHealthy: Gate = { weight: configured, allows: () => true };
const downSet = (...names: string[]): Gate => ({ weight: configured, allows: (t) => !names.includes(t.name) });
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
    const killA: Gate = { weight: (t) => (t.name === 'a' ? 0 : t.weight), allows: () => true };
    expect(names(planTiers(r, killA))).toEqual(['b']);
  });

  it('asks allows only of tiers that won their draw (a half-open trial is not claimed for nothing)', () => {
    const asked: string[] = [];
    const r = route([tier('a', { weight: 0 }), tier('b')]);
    planTiers(r, {
      weight: configured,
      allows: (t) => {
        asked.push(t.name);
        return true;
      },
    });
    expect(asked).toEqual(['b']);
  });

  it('returns an empty plan when every tier lost its draw', () => {
    const r = route([tier('a', { weight: 0 })]);
    expect(planTiers(r, allHealthy)).toEqual({ tiers: [], allDown: false, affinity: false });
  });
});

describe('planTiers with a session (affinity)', () => {
  const r = route([tier('canary', { weight: 50 }), tier('stable')]);
  const [canary, stable] = r.tiers; // the route's own tier objects, as the request path looks them up
  const always = (t: Tier) => () => t;
  const loses = () => 0.99; // every weighted draw lost
  const wins = () => 0; // every weighted draw won

  it('keeps a session on its tier whatever the draw: the canary wins its draw for a session on it, loses it for one on the stable tier', () => {
    expect(planTiers(r, allHealthy, loses, always(canary))).toEqual({ tiers: [canary, stable], allDown: false, affinity: true });
    expect(planTiers(r, allHealthy, wins, always(stable))).toEqual({ tiers: [stable], allDown: false, affinity: true });
    // Without a session the draw decides.
    expect(planTiers(r, allHealthy, loses, () => null)).toEqual({ tiers: [stable], allDown: false, affinity: false });
    expect(planTiers(r, allHealthy, wins)).toEqual({ tiers: [canary, stable], allDown: false, affinity: false });
  });

  it('never overrides priority: tiers of weight 100 ahead keep their place, weighted tiers after the session tier draw as usual', () => {
    const routed = route([tier('local'), tier('canary', { weight: 50 }), tier('cloud'), tier('late', { weight: 30 })]);
    const [local, , cloud] = routed.tiers;
    expect(names(planTiers(routed, allHealthy, wins, always(cloud)))).toEqual(['local', 'cloud', 'late']);
    expect(names(planTiers(routed, allHealthy, loses, always(cloud)))).toEqual(['local', 'cloud']);
    // A session on a tier ahead of every weighted one: nothing to decide.
    expect(planTiers(routed, allHealthy, wins, always(local))).toMatchObject({ affinity: false });
  });

  it('lets the draw decide when the session tier is down, switched off, or not in the route', () => {
    expect(planTiers(r, downSet('canary'), wins, always(canary))).toEqual({ tiers: [stable], allDown: false, affinity: false });
    const killCanary: Gate = { weight: (t) => (t === canary ? 0 : t.weight), allows: () => true };
    expect(planTiers(r, killCanary, wins, always(canary))).toEqual({ tiers: [stable], allDown: false, affinity: false });
    expect(planTiers(r, allHealthy, wins, always(tier('gone')))).toEqual({ tiers: [canary, stable], allDown: false, affinity: false });
  });

  it('asks for the session only when a weighted tier is met, and once', () => {
    let asked = 0;
    const ask = () => {
      asked++;
      return stable;
    };
    planTiers(route([tier('a'), tier('b')]), allHealthy, wins, ask);
    expect(asked).toBe(0);
    planTiers(route([tier('a', { weight: 10 }), tier('b', { weight: 20 }), tier('stable')]), allHealthy, wins, ask);
    expect(asked).toBe(1);
  });
});
