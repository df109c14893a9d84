import { describe, expect, it } from 'vitest';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { controlYaml, healthzTiers, startFileProxy } from '../../helpers/control-kit.js';

/**
 * A warm-up of a llama-server still loading its model (503 Loading model on every endpoint):
 * not a health failure; the warm-up waits, says how long, and succeeds once it has loaded.
 */

const h = useHarness();

describe('warm-up of a loading server', () => {
  it('is not a failure: no tier_state, and it reports ok with the wait once loaded', { timeout: 15_000 }, async () => {
    const llama = await FakeLlamaServer.start({ loading: true });
    h.defer(() => llama.close());
    const p = await startFileProxy(controlYaml({ tiers: [{ name: 'local', url: llama.url, model: 'tiny', health: { interval_ms: 200 } }] }), {
      activeChecks: true,
    });
    h.defer(() => p.close());

    const loading = await waitFor(
      () => p.logs.find((l) => l.event === 'health_check' && l.kind === 'warmup' && l.loading === true),
      3_000,
      'a warm-up that saw the server loading',
    );
    expect(loading).toMatchObject({ ok: false, reachable: true, loading: true, waitedMs: 0, error: 'still loading (HTTP 503: Loading model)' });
    // Periodic checks see it loading too; neither they nor the warm-up count against it.
    await waitFor(
      () => p.logs.filter((l) => l.event === 'health_check' && l.kind === 'check' && l.loading === true).length >= 3,
      3_000,
      'three loading checks',
    );
    expect((await healthzTiers(p)).local).toMatchObject({ state: 'healthy', consecutive_failures: 0 });

    llama.loaded();
    const ready = await waitFor(() => p.logs.find((l) => l.event === 'health_check' && l.kind === 'warmup' && l.ok === true), 5_000, 'the warm-up succeeding');
    expect(ready.waitedMs as number).toBeGreaterThanOrEqual(800);
    expect(typeof ready.ttftMs).toBe('number');
    expect(p.logs.filter((l) => l.event === 'tier_state')).toEqual([]);
    expect(llama.requests.filter((r) => r.body.max_tokens === 1).length).toBeGreaterThanOrEqual(1);
  });
});
