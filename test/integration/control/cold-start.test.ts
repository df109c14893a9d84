import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/clock.js';
import { healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { sseText } from '../../helpers/proxy.js';
import { ask, controlYaml } from '../../helpers/control-kit.js';

/**
 * Cold starts: a local tier that holds its response headers while "loading the model" gets
 * `cold_ttft_ms` on its first request after being idle, `ttft_ms` once warm.
 */

const h = useHarness();
const TTFT_MS = 300;
const COLD_TTFT_MS = 2_000;
const LOAD_MS = 800; // longer than ttft_ms, shorter than cold_ttft_ms

/** Holds its headers for LOAD_MS, then streams normally (what Ollama does while loading a model). */
const slowHeaders =
  (text: string): Script =>
  async (ctx) => {
    await ctx.wait(LOAD_MS);
    if (ctx.isClosed()) return;
    await healthyStream([text])(ctx);
  };

/** Idleness (`cold_after_ms`) is measured on `clock`; the TTFT budgets are real timers. */
async function setup(timeouts: Record<string, number>) {
  const local = await h.fake();
  const cloud = await h.fake();
  cloud.always(healthyStream(['cloud']));
  const clock = new ManualClock();
  const p = await h.proxy(
    controlYaml({
      tiers: [
        { name: 'local', url: local.url, timeouts: { ttft_ms: TTFT_MS, cold_ttft_ms: COLD_TTFT_MS, ...timeouts } },
        { name: 'cloud', url: cloud.url },
      ],
    }),
    { clock },
  );
  return { local, cloud, p, clock };
}

describe('cold start budget', () => {
  it('first request: slow headers within cold_ttft_ms are not failed over; once warm the same slowness is', async () => {
    const { local, cloud, p } = await setup({});
    local.always(slowHeaders('local'));

    const first = await ask(p);
    expect(first.status).toBe(200);
    expect(first.tier).toBe('local');
    expect(first.attempts).toBe(1);
    expect(sseText(first.text)).toBe('local');
    expect(Number(first.headers.get('x-llm-route-ttft-ms'))).toBeGreaterThanOrEqual(LOAD_MS - 50);
    expect(cloud.requests).toHaveLength(0);

    // Warm now: ttft_ms applies, and the same 800 ms wait is a TTFT timeout → cloud.
    const second = await ask(p);
    expect(second.status).toBe(200);
    expect(second.tier).toBe('cloud');
    expect(second.attempts).toBe(2);
    expect(sseText(second.text)).toBe('cloud');
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toHaveLength(1);
    const log = p.logs.filter((l) => l.event === 'request');
    expect((log[1].attempts as Array<Record<string, unknown>>)[0]).toMatchObject({ tier: 'local', outcome: 'ttft_timeout' });
  });

  it('a fast local tier: warm requests are answered by it (the cold budget is not needed)', async () => {
    const { local, cloud, p } = await setup({});
    local.always(healthyStream(['local']));
    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('local');
    expect(cloud.requests).toHaveLength(0);
  });

  it('with a small cold_after_ms, the tier is cold again after a pause', async () => {
    const { local, cloud, p, clock } = await setup({ cold_after_ms: 200 });
    local.always(slowHeaders('local'));

    expect((await ask(p)).tier).toBe('local'); // cold: 2000 ms budget
    // Immediately after a success the tier is warm: 300 ms budget, fails over.
    const warm = await ask(p);
    expect(warm.tier).toBe('cloud');
    expect(cloud.requests).toHaveLength(1);

    // The last success was before the pause (> cold_after_ms): cold again.
    clock.advance(201);
    const cold = await ask(p);
    expect(cold.tier).toBe('local');
    expect(cold.attempts).toBe(1);
    expect(cloud.requests).toHaveLength(1);
  });
});
