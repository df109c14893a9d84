import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/clock.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, useHarness, waitFor } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';
import { ask, controlYaml, healthzTiers, startFileProxy, withModelList } from '../../helpers/control-kit.js';

/**
 * Active health checks (`health.interval_ms` on a provider) and warm-ups of local tiers, in a
 * ProxyServer started with activeChecks: true (as `serve` does).
 */

const h = useHarness();

describe('active health checks', () => {
  it('a provider on a dead port goes down without any request', async () => {
    const cloud = await h.fake();
    cloud.always(withModelList(['cloud-model'], healthyStream(['cloud'])));
    const p = await startFileProxy(
      controlYaml({
        tiers: [
          { name: 'dead', url: DEAD_URL, health: { interval_ms: 200, timeout_ms: 500, warmup: false } },
          { name: 'cloud', url: cloud.url, health: { warmup: false } },
        ],
      }),
      { activeChecks: true },
    );
    h.defer(() => p.close());

    const line = await waitFor(
      () => p.logs.find((l) => l.event === 'tier_state' && l.tier === 'dead' && l.to === 'down'),
      5_000,
      'a tier_state line: dead → down',
    );
    expect(line).toMatchObject({ route: 'chat', tier: 'dead', to: 'down' });
    expect(p.logs.some((l) => l.event === 'request')).toBe(false); // no request was made
    // The failed checks themselves are logged, with the reason.
    const check = p.logs.find((l) => l.event === 'health_check' && l.tier === 'dead');
    expect(check).toMatchObject({ kind: 'check', ok: false, reachable: false });
    expect(String(check?.error)).toMatch(/refused/);

    const health = await healthzTiers(p);
    expect(health.dead.state).toBe('down');
    expect(health.cloud.state).toBe('healthy');
    expect(metric((await fetchMetrics(p)).samples, 'llm_tier_state', { route: 'chat', tier: 'dead' })).toBe(2);

    // The planner skips it: the first request goes straight to the cloud tier.
    const r = await ask(p);
    expect(r.tier).toBe('cloud');
    expect(r.attempts).toBe(1);
  });

  it('a local provider is warmed up at start with a 1-token request', async () => {
    const local = await h.fake();
    local.always(withModelList(['local-model'], healthyStream(['local'])));
    const p = await startFileProxy(controlYaml({ tiers: [{ name: 'local', url: local.url }] }), { activeChecks: true });
    h.defer(() => p.close());

    const warmup = await waitFor(() => local.requests.find((r) => r.body.max_tokens === 1), 3_000, 'a warm-up request at the fake');
    expect(warmup.body).toMatchObject({ model: 'local-model', max_tokens: 1, stream: true });
    const line = await waitFor(() => p.logs.find((l) => l.event === 'health_check' && l.kind === 'warmup'), 3_000, 'a warm-up log line');
    expect(line).toMatchObject({ route: 'chat', tier: 'local', kind: 'warmup', ok: true });
    expect(typeof line.ttftMs).toBe('number');
    // The warm-up made no client request.
    expect(p.logs.some((l) => l.event === 'request')).toBe(false);
  });

  it("warm-up can be switched off (warmup: false): no model request reaches the fake, only discovery's GETs", async () => {
    const local = await h.fake();
    local.always(withModelList(['local-model'], healthyStream(['local'])));
    const p = await startFileProxy(controlYaml({ tiers: [{ name: 'local', url: local.url, health: { warmup: false } }] }), { activeChecks: true });
    h.defer(() => p.close());
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Route by fit reads the window, and the loaded state, from the server's documented endpoints at start (GETs only).
    expect(local.requests.filter((r) => !['/v1/models', '/props', '/api/v0/models', '/running', '/models'].includes(r.url))).toEqual([]);
  });

  it('without activeChecks (embedded/test servers) nothing is checked or warmed up', async () => {
    const local = await h.fake();
    local.always(withModelList(['local-model'], healthyStream(['local'])));
    const p = await startFileProxy(controlYaml({ tiers: [{ name: 'local', url: local.url, health: { interval_ms: 100 } }] }));
    h.defer(() => p.close());
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(local.requests).toHaveLength(0);
  });

  it('a passing model-list check does not close a circuit that chat failures opened (the chat endpoint is what broke)', async () => {
    const primary = await h.fake();
    const cloud = await h.fake();
    // /models answers fine; chat requests fail with 503 (an overloaded or broken model server).
    primary.always(withModelList(['primary-model'], (ctx) => ctx.error(503, 'overloaded')));
    cloud.always(withModelList(['cloud-model'], healthyStream(['cloud'])));
    // The cooldown runs on a test clock that stands still: it cannot pass while the checks run.
    const clock = new ManualClock();
    const p = await startFileProxy(
      controlYaml({
        tiers: [
          { name: 'primary', url: primary.url, retry: { attempts: 1 }, circuit: { cooldown_ms: 5_000 }, health: { interval_ms: 100, warmup: false } },
          { name: 'cloud', url: cloud.url, health: { warmup: false } },
        ],
      }),
      { activeChecks: true, clock },
    );
    h.defer(() => p.close());
    const chatHits = () => primary.requests.filter((r) => r.body.messages !== undefined).length;
    const modelListChecks = () => primary.requests.filter((r) => r.body.messages === undefined).length;

    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('cloud');
    expect(chatHits()).toBe(3);
    expect((await healthzTiers(p)).primary.state).toBe('down');

    // Several checks pass during the cooldown; none of them sent a chat request.
    const checksBefore = modelListChecks();
    await waitFor(() => modelListChecks() >= checksBefore + 3, 5_000, 'three more model-list checks');
    expect
      .soft(p.logs.filter((l) => l.event === 'tier_state' && l.tier === 'primary').map((l) => `${l.from}->${l.to}: ${l.reason}`))
      .toEqual(['healthy->degraded: failing: server_error (1 in a row)', 'degraded->down: circuit open after 3 failures in a row (last: server_error)']);
    expect.soft((await healthzTiers(p)).primary.state, 'state after passing model-list checks').toBe('down');
    for (let i = 0; i < 5; i++) expect((await ask(p)).tier).toBe('cloud');
    expect(chatHits(), 'chat attempts on the primary while its circuit is open').toBe(3);
  });

  it('a passing model-list check does not make a cold local tier warm (no model was loaded)', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    // The chat request holds its headers for 800 ms (a model load); the model list is instant.
    local.always(
      withModelList(['local-model'], async (ctx) => {
        await ctx.wait(800);
        if (!ctx.isClosed()) await healthyStream(['local'])(ctx);
      }),
    );
    cloud.always(withModelList(['cloud-model'], healthyStream(['cloud'])));
    const p = await startFileProxy(
      controlYaml({
        tiers: [
          { name: 'local', url: local.url, timeouts: { ttft_ms: 300, cold_ttft_ms: 2_000 }, health: { interval_ms: 200, warmup: false } },
          { name: 'cloud', url: cloud.url, health: { warmup: false } },
        ],
      }),
      { activeChecks: true },
    );
    h.defer(() => p.close());
    await waitFor(() => local.requests.filter((r) => r.body.messages === undefined).length >= 2, 3_000, 'two model-list checks');
    expect(local.requests.filter((r) => r.body.messages !== undefined)).toHaveLength(0);

    const first = await ask(p);
    expect(first.tier, 'the first chat request of a never-used local tier gets cold_ttft_ms').toBe('local');
  });
});
