import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, useHarness } from '../../helpers/harness.js';
import { sseText } from '../../helpers/proxy.js';
import { answer, ask, controlYaml, seeded } from '../../helpers/control-kit.js';

/**
 * Canary weights through the proxy: each request draws once per weighted tier (the proxy's
 * `random` is seeded or scripted here); a tier that lost the draw is not tried at all, a
 * tier that won and failed falls through to the next.
 */

const h = useHarness();

describe('canary weights', () => {
  it('weight 0 is never contacted; weight 50 gets about half of 200 requests; the rest go to the stable tier', { timeout: 30_000 }, async () => {
    const off = await h.fake();
    const canary = await h.fake();
    const stable = await h.fake();
    off.always(answer('off'));
    canary.always(answer('canary'));
    stable.always(answer('stable'));
    const p = await h.proxy(
      controlYaml({
        tiers: [
          { name: 'off', url: off.url, weight: 0 },
          { name: 'canary', url: canary.url, weight: 50 },
          { name: 'stable', url: stable.url },
        ],
      }),
      { random: seeded(42) },
    );

    const N = 200;
    const byTier: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      const r = await ask(p, { stream: i % 2 === 0 });
      expect(r.status).toBe(200);
      expect(r.attempts).toBe(1); // a lost draw is not an attempt
      byTier[r.tier ?? 'none'] = (byTier[r.tier ?? 'none'] ?? 0) + 1;
    }
    expect(off.requests).toHaveLength(0);
    expect(byTier.off).toBeUndefined();
    expect(canary.requests.length).toBe(byTier.canary);
    expect(stable.requests.length).toBe(byTier.stable);
    expect(byTier.canary + byTier.stable).toBe(N);
    expect(byTier.canary).toBeGreaterThanOrEqual(N * 0.35);
    expect(byTier.canary).toBeLessThanOrEqual(N * 0.65);

    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'off' })).toBe(0);
    expect(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'canary' })).toBe(50);
    expect(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'stable' })).toBe(100);
  });

  it('a canary that lost the draw is not tried at all; one that won and failed falls through to the next tier', async () => {
    const canary = await h.fake();
    const stable = await h.fake();
    canary.always((ctx) => ctx.error(503, 'canary broken'));
    stable.always(healthyStream(['stable']));
    let dice = 0.9; // ≥ 0.5: the weight-50 canary loses
    const p = await h.proxy(
      controlYaml({
        tiers: [
          { name: 'canary', url: canary.url, weight: 50, retry: { attempts: 1 } },
          { name: 'stable', url: stable.url },
        ],
      }),
      { random: () => dice },
    );

    const lost = await ask(p);
    expect(lost.tier).toBe('stable');
    expect(lost.attempts).toBe(1);
    expect(canary.requests).toHaveLength(0);
    expect(p.logs.find((l) => l.event === 'request')?.attempts).toHaveLength(1);

    dice = 0.1; // the canary wins, fails, and the stable tier answers
    const won = await ask(p);
    expect(won.status).toBe(200);
    expect(won.tier).toBe('stable');
    expect(won.attempts).toBe(2);
    expect(sseText(won.text)).toBe('stable');
    expect(canary.requests).toHaveLength(1);
    const log = p.logs.filter((l) => l.event === 'request')[1];
    expect(log.attempts).toMatchObject([
      { tier: 'canary', outcome: expect.any(String), status: 503 },
      { tier: 'stable', outcome: 'ok' },
    ]);
  });

  it('with a single weighted tier that loses the draw, the request gets a clean error, and no upstream is called', async () => {
    const canary = await h.fake();
    canary.always(healthyStream(['canary']));
    const p = await h.proxy(controlYaml({ tiers: [{ name: 'canary', url: canary.url, weight: 50 }] }), { random: () => 0.99 });
    const r = await ask(p);
    expect(r.status).toBe(503);
    expect(JSON.parse(r.text).error).toMatchObject({ code: 'no_tier_available', attempts: [] });
    expect(r.tier).toBeNull();
    expect(canary.requests).toHaveLength(0);
  });
});
