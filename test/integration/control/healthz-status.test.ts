import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/clock.js';
import { ask, controlYaml } from '../../helpers/control-kit.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';

/** /healthz's top-level status follows the tiers: ok, degraded when no tier is healthy, down when all are (docs/operations.md). */

const h = useHarness();

async function healthzStatus(origin: string): Promise<{ code: number; status: string; states: string[] }> {
  const res = await fetch(`${origin}/healthz`);
  const json = (await res.json()) as { status: string; routes: Record<string, { tiers: Array<{ state: string }> }> };
  return { code: res.status, status: json.status, states: Object.values(json.routes).flatMap((r) => r.tiers.map((t) => t.state)) };
}

describe('GET /healthz status', () => {
  it('degraded once every tier is degraded, down once every tier is down', async () => {
    // One tier whose server refuses: each request is one failure; the clock stands still, so no cooldown passes.
    const p = await h.proxy(controlYaml({ tiers: [{ name: 'local', url: DEAD_URL, retry: { attempts: 1 } }] }), { clock: new ManualClock() });
    expect(await healthzStatus(p.origin)).toEqual({ code: 200, status: 'ok', states: ['healthy'] });

    expect((await ask(p)).status).toBe(502);
    expect(await healthzStatus(p.origin)).toEqual({ code: 200, status: 'degraded', states: ['degraded'] });

    for (let i = 0; i < 2; i++) await ask(p);
    expect(await healthzStatus(p.origin)).toEqual({ code: 200, status: 'down', states: ['down'] });
  });

  it('ok while one tier is healthy, whatever the others', async () => {
    const cloud = await h.fake();
    cloud.always(healthyStream(['cloud']));
    const p = await h.proxy(
      controlYaml({
        tiers: [
          { name: 'local', url: DEAD_URL, retry: { attempts: 1 } },
          { name: 'cloud', url: cloud.url },
        ],
      }),
      { clock: new ManualClock() },
    );
    expect((await ask(p)).tier).toBe('cloud');
    expect(await healthzStatus(p.origin)).toEqual({ code: 200, status: 'ok', states: ['degraded', 'healthy'] });
  });
});
