import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/clock.js';
import type { Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, useHarness, waitFor } from '../../helpers/harness.js';
import { sseText } from '../../helpers/proxy.js';
import { admin, adminTiers, answer, ask, type ControlTier, controlYaml, startFileProxy } from '../../helpers/control-kit.js';

/**
 * Automated rollback: `rollback: { ttft_p99_ms, error_rate, window_s, min_requests,
 * restore_after_s }` on a tier. A breach drops the tier's weight to 0 at once, logs the
 * numbers, counts llm_rollbacks_total, and holds until DELETE, a reload or restore_after_s.
 */

const h = useHarness();
const SLOW_FIRST_TOKEN_MS = 500;

/** Headers at once, the first token after `ms` (while `slow()`), then the rest. */
function firstTokenAfter(ms: number, text: string, slow: () => boolean = () => true): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    if (slow()) await ctx.wait(ms);
    ctx.content(text);
    ctx.finish();
    ctx.done();
  };
}

const rollbackLines = (p: { logs: Array<Record<string, unknown>> }) => p.logs.filter((l) => l.event === 'rollback');

/** A canary and a stable tier; the rollback windows, circuits and restores run on `clock`. */
async function setup(canaryTier: Omit<ControlTier, 'name' | 'url'>, canaryScript: Script) {
  const canary = await h.fake();
  const stable = await h.fake();
  canary.always(canaryScript);
  stable.always(answer('stable'));
  const clock = new ManualClock();
  const p = await h.proxy(
    controlYaml({
      tiers: [
        { name: 'canary', url: canary.url, ...canaryTier },
        { name: 'stable', url: stable.url },
      ],
    }),
    { clock },
  );
  return { canary, stable, p, clock };
}

describe('automated rollback', () => {
  it('TTFT p99 over the threshold after min_requests → weight 0 at once, logged with the numbers, counted; off until DELETE', { timeout: 20_000 }, async () => {
    let slow = true;
    const { canary, stable, p, clock } = await setup(
      { timeouts: { ttft_ms: 3_000 }, rollback: { ttft_p99_ms: 300, window_s: 10, min_requests: 5 } },
      firstTokenAfter(SLOW_FIRST_TOKEN_MS, 'canary', () => slow),
    );

    for (let i = 0; i < 4; i++) {
      const r = await ask(p);
      expect(r.tier).toBe('canary'); // slow, but within ttft_ms: no failover
    }
    expect(rollbackLines(p)).toHaveLength(0); // 4 < min_requests
    expect((await adminTiers(p)).canary.weight).toBe(100);

    expect((await ask(p)).tier).toBe('canary'); // the 5th request trips it
    const line = await waitFor(() => rollbackLines(p)[0], 2_000, 'a rollback log line');
    expect(line).toMatchObject({ event: 'rollback', route: 'chat', tier: 'canary', reason: 'ttft_p99', threshold: 300, requests: 5, windowS: 10 });
    expect(line.observed as number).toBeGreaterThanOrEqual(SLOW_FIRST_TOKEN_MS - 50);
    expect(line.observed as number).toBeLessThan(2_000);
    const weightLine = p.logs.find((l) => l.event === 'weight' && l.source === 'rollback');
    expect(weightLine).toMatchObject({ tier: 'canary', weight: 0, configured: 100 });
    expect(String(weightLine?.reason)).toMatch(/TTFT p99 \d+ ms > 300 ms/);

    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_rollbacks_total', { route: 'chat', tier: 'canary', reason: 'ttft_p99' })).toBe(1);
    expect(metric(samples, 'llm_tier_weight', { route: 'chat', tier: 'canary' })).toBe(0);
    const view = (await adminTiers(p)).canary;
    expect(view.weight).toBe(0);
    expect(view.rollback).toMatchObject({ reason: expect.stringMatching(/TTFT p99/) });

    // Off: the next requests go to the next tier, the canary sees nothing, and it stays off.
    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('stable');
    expect(canary.requests).toHaveLength(5);
    expect(stable.requests).toHaveLength(3);
    clock.advance(60_000); // long past the window: a rollback without restore_after_s holds
    expect((await adminTiers(p)).canary.weight).toBe(0);
    expect(rollbackLines(p)).toHaveLength(1);

    // DELETE brings it back (the canary has been fixed meanwhile).
    slow = false;
    const del = await admin(p, 'DELETE', '/admin/routes/chat/tiers/canary');
    expect(del.status).toBe(200);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, rollback: null });
    for (let i = 0; i < 5; i++) expect((await ask(p)).tier).toBe('canary');
    expect(rollbackLines(p)).toHaveLength(1);
    expect(metric((await fetchMetrics(p)).samples, 'llm_rollbacks_total', { route: 'chat', tier: 'canary', reason: 'ttft_p99' })).toBe(1);
  });

  it('error rate over the threshold → rolled back; requests then skip the canary entirely', async () => {
    const { canary, p } = await setup(
      { retry: { attempts: 1 }, circuit: { failures: 50 }, rollback: { error_rate: 0.5, window_s: 10, min_requests: 5 } },
      (ctx) => ctx.error(503, 'canary broken'),
    );
    for (let i = 0; i < 5; i++) {
      const r = await ask(p);
      expect(r.status).toBe(200);
      expect(r.tier).toBe('stable');
      expect(r.attempts).toBe(2);
    }
    const line = await waitFor(() => rollbackLines(p)[0], 2_000, 'a rollback log line');
    expect(line).toMatchObject({ route: 'chat', tier: 'canary', reason: 'error_rate', observed: 1, threshold: 0.5, requests: 5, windowS: 10 });
    expect(String(p.logs.find((l) => l.event === 'weight' && l.source === 'rollback')?.reason)).toMatch(/error rate 100\.0% > 50\.0%/);
    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_rollbacks_total', { route: 'chat', tier: 'canary', reason: 'error_rate' })).toBe(1);
    expect(metric(samples, 'llm_rollbacks_total', { route: 'chat', tier: 'canary', reason: 'ttft_p99' }) ?? 0).toBe(0);

    for (let i = 0; i < 3; i++) {
      const r = await ask(p);
      expect(r.tier).toBe('stable');
      expect(r.attempts).toBe(1); // the canary is not tried at all
    }
    expect(canary.requests).toHaveLength(5);
  });

  it('with the default circuit breaker (which opens first), an error-rate rollback still trips via the half-open trials', async () => {
    const { canary, p, clock } = await setup({ retry: { attempts: 1 }, rollback: { error_rate: 0.5, window_s: 30, min_requests: 5 } }, (ctx) =>
      ctx.error(503, 'canary broken'),
    );
    const started = clock.now();
    while (rollbackLines(p).length === 0 && clock.now() - started < 8_000) {
      const r = await ask(p);
      expect(r.tier).toBe('stable');
      clock.advance(100);
    }
    // 3 failures open the circuit, trials after 1 s and 2 s more bring the window to 5.
    expect(rollbackLines(p)[0]).toMatchObject({ tier: 'canary', reason: 'error_rate', requests: 5 });
    expect(canary.requests.length).toBe(5);
  });

  it('restore_after_s: 1 restores the weight by itself', async () => {
    let broken = true;
    const ok = answer('canary');
    const { p, clock } = await setup(
      { retry: { attempts: 1 }, circuit: { failures: 50 }, rollback: { error_rate: 0.5, window_s: 10, min_requests: 5, restore_after_s: 1 } },
      (ctx) => (broken ? ctx.error(503, 'canary broken') : ok(ctx)),
    );
    for (let i = 0; i < 5; i++) await ask(p);
    await waitFor(() => rollbackLines(p)[0], 2_000, 'a rollback');
    expect((await adminTiers(p)).canary.weight).toBe(0);
    broken = false;
    expect((await ask(p)).tier).toBe('stable');

    clock.advance(999);
    expect((await adminTiers(p)).canary.weight).toBe(0);
    clock.advance(1);
    expect((await adminTiers(p)).canary.weight).toBe(100);
    expect((await adminTiers(p)).canary.rollback).toBeNull();
    expect(p.logs.find((l) => l.event === 'weight' && l.source === 'expired')).toMatchObject({ tier: 'canary', weight: 100 });
    const r = await ask(p);
    expect(r.tier).toBe('canary');
    expect(sseText(r.text)).toBe('canary');
  });

  it('a reload clears a rollback (the operator has acted)', async () => {
    const canary = await h.fake();
    const stable = await h.fake();
    canary.always((ctx) => ctx.error(503, 'canary broken'));
    stable.always(answer('stable'));
    const p = await startFileProxy(
      controlYaml({
        tiers: [
          { name: 'canary', url: canary.url, retry: { attempts: 1 }, circuit: { failures: 50 }, rollback: { error_rate: 0.5, window_s: 10, min_requests: 5 } },
          { name: 'stable', url: stable.url },
        ],
      }),
    );
    h.defer(() => p.close());
    for (let i = 0; i < 5; i++) await ask(p);
    await waitFor(() => rollbackLines(p)[0], 2_000, 'a rollback');
    expect((await adminTiers(p)).canary.weight).toBe(0);
    expect((await admin(p, 'POST', '/admin/reload')).status).toBe(200);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, rollback: null });
  });
});
