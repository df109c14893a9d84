import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { ManualClock } from '../../helpers/clock.js';
import { fetchMetrics, metric, useHarness } from '../../helpers/harness.js';
import { sseText } from '../../helpers/proxy.js';
import { admin, ask, controlYaml, healthzTiers } from '../../helpers/control-kit.js';

/**
 * A flapping primary with default circuit settings (3 failures open it; cooldowns 1, 2, 4,
 * 8 s; one half-open trial after each) and default retry (2 attempts per tier): during the
 * outage the fallback answers everything and the primary sees a bounded number of attempts;
 * after recovery traffic returns to the primary within 10 s. The circuit's clock is a test
 * clock, moved on between requests: no cooldown is waited through.
 */

const h = useHarness();

const OUTAGE_MS = 3_000;
const INTERVAL_MS = 120;

describe('circuit breaker: a flapping primary', () => {
  it('outage: fallback answers every request, bounded primary attempts, state down everywhere; recovery: back to primary within 10 s', async () => {
    const primary = await h.fake();
    const fallback = await h.fake();
    let down = true;
    let hitsWhileDown = 0;
    const primaryOk = healthyStream(['from', ' primary']);
    primary.always((ctx) => {
      if (down) {
        hitsWhileDown++;
        return ctx.error(503, 'primary is overloaded');
      }
      return primaryOk(ctx);
    });
    fallback.always(healthyStream(['from', ' fallback']));
    const clock = new ManualClock();
    const p = await h.proxy(
      controlYaml({
        tiers: [
          { name: 'primary', url: primary.url },
          { name: 'fallback', url: fallback.url },
        ],
      }),
      { clock },
    );

    // ── the outage ──
    const outageTiers: Array<string | null> = [];
    const outageStarted = clock.now();
    while (clock.now() - outageStarted < OUTAGE_MS) {
      const r = await ask(p);
      expect(r.status).toBe(200);
      expect(sseText(r.text)).toBe('from fallback');
      outageTiers.push(r.tier);
      clock.advance(INTERVAL_MS);
    }
    expect(outageTiers).toHaveLength(OUTAGE_MS / INTERVAL_MS);
    expect(outageTiers.every((t) => t === 'fallback')).toBe(true);

    // Bound: 3 failing attempts open the circuit; the request whose attempt opened it may still
    // retry once (≤ 4 before it is open). Then one half-open trial per cooldown (1 s, then 2 s:
    // trials at ~+1 s and ~+3 s after the open, the next at +7 s is past the outage), each retried
    // at most once: ≤ 4 + 2·2 = 8. The clock moves only between requests: no slack for timing.
    expect(hitsWhileDown).toBeGreaterThanOrEqual(3);
    expect(hitsWhileDown).toBeLessThanOrEqual(8);

    // State: down in /healthz, in the gauge, and as a tier_state line in the request log.
    const health = await healthzTiers(p);
    expect(health.primary.state).toBe('down');
    expect(health.fallback.state).toBe('healthy');
    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_tier_state', { route: 'chat', tier: 'primary' })).toBe(2);
    expect(metric(samples, 'llm_tier_state', { route: 'chat', tier: 'fallback' })).toBe(0);
    const downLine = p.logs.find((l) => l.event === 'tier_state' && l.tier === 'primary' && l.to === 'down');
    expect(downLine).toMatchObject({ event: 'tier_state', route: 'chat', tier: 'primary', to: 'down' });
    expect(typeof downLine?.reason).toBe('string');

    // ── recovery ──
    down = false;
    const recoveredAt = clock.now();
    let backAfterMs: number | null = null;
    while (clock.now() - recoveredAt < 11_000) {
      const r = await ask(p);
      expect(r.status).toBe(200);
      if (r.tier === 'primary') {
        backAfterMs = clock.now() - recoveredAt;
        expect(sseText(r.text)).toBe('from primary');
        break;
      }
      expect(r.tier).toBe('fallback');
      clock.advance(INTERVAL_MS);
    }
    expect(backAfterMs, 'traffic returned to the primary').not.toBeNull();
    expect(backAfterMs!).toBeLessThanOrEqual(10_000);

    // Closed again: the following requests all go to the primary.
    for (let i = 0; i < 4; i++) {
      const r = await ask(p);
      expect(r.tier).toBe('primary');
      clock.advance(INTERVAL_MS);
    }
    expect((await healthzTiers(p)).primary.state).not.toBe('down');
    expect(metric((await fetchMetrics(p)).samples, 'llm_tier_state', { route: 'chat', tier: 'primary' })).toBeLessThan(2);
    expect(p.logs.some((l) => l.event === 'tier_state' && l.tier === 'primary' && l.from === 'down')).toBe(true);
  });

  it('a half-open trial slot claimed by a request that never reached the tier does not lock the recovered tier out', async () => {
    // The fallback goes down while the primary is switched off, then recovers. Its cooldown
    // passes while the primary is healthy again, so requests plan [primary, fallback] and the
    // primary answers: the fallback's trial is never actually run. When the primary then
    // breaks, the fallback (healthy, cooled down) must still be tried.
    const primary = await h.fake();
    const fallback = await h.fake();
    let primaryBroken = false;
    let fallbackBroken = true;
    const primaryOk = healthyStream(['primary']);
    const fallbackOk = healthyStream(['fallback']);
    primary.always((ctx) => (primaryBroken ? ctx.error(503, 'primary broken') : primaryOk(ctx)));
    fallback.always((ctx) => (fallbackBroken ? ctx.error(503, 'fallback broken') : fallbackOk(ctx)));
    const clock = new ManualClock();
    const p = await h.proxy(
      controlYaml({
        tiers: [
          { name: 'primary', url: primary.url, retry: { attempts: 1 } },
          { name: 'fallback', url: fallback.url, retry: { attempts: 1 } },
        ],
      }),
      { clock },
    );

    expect((await admin(p, 'PUT', '/admin/routes/chat/tiers/primary', { weight: 0 })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await ask(p)).status).toBe(502);
    expect((await healthzTiers(p)).fallback.state).toBe('down');
    expect((await admin(p, 'DELETE', '/admin/routes/chat/tiers/primary')).status).toBe(200);
    fallbackBroken = false;
    clock.advance(1_300); // past the first cooldown (1 s)

    expect((await ask(p)).tier).toBe('primary'); // planned [primary, fallback]; the fallback was not needed
    primaryBroken = true;
    const r = await ask(p);
    expect(r.status, 'the recovered fallback answers once the primary breaks').toBe(200);
    expect(r.tier).toBe('fallback');
  });
});
