import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../helpers/clock.js';
import { healthyStream, resetAtOnce, type Script } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';
import { ask, controlYaml, healthzTiers } from '../../helpers/control-kit.js';

/**
 * Whose fault is a failure? A transport failure (refused, reset) is the provider's: it counts
 * against every tier on that provider, in every route. A model-level failure is the tier's.
 */

const h = useHarness();

/** Two routes, each with a first tier "local" on one shared provider, and a cloud tier behind it. */
async function twoRoutesOnOneProvider(localUrl: string, models: { chat: string; embed: string }) {
  const cloud = await h.fake();
  cloud.always(healthyStream(['cloud']));
  const local = (model: string) => ({ name: 'local', url: localUrl, model, retry: { attempts: 1 } });
  const yaml = controlYaml({
    tiers: [local(models.chat), { name: 'cloud', url: cloud.url }],
    routes: { embed: [local(models.embed), { name: 'cloud', url: cloud.url }] },
  });
  expect(yaml.match(/p_local:/g)).toHaveLength(1); // one provider, used by both routes
  // The clock stands still: no cooldown can pass while the test looks.
  const p = await h.proxy(yaml, { clock: new ManualClock() });
  return { cloud, p };
}

describe('provider-wide blame', () => {
  it.each([
    ['refused', async () => DEAD_URL],
    [
      'reset',
      async () => {
        const fake = await h.fake();
        fake.always(resetAtOnce);
        return fake.url;
      },
    ],
  ])("a connection %s on the chat route counts against the provider's tier in the embed route too", async (_kind, localUrl) => {
    const { cloud, p } = await twoRoutesOnOneProvider(await localUrl(), { chat: 'chat-model', embed: 'embed-model' });

    expect((await ask(p)).tier).toBe('cloud');
    const afterOne = await healthzTiers(p, 'embed');
    expect(afterOne.local).toMatchObject({ consecutive_failures: 1, failures: 1, state: 'degraded' });

    for (let i = 0; i < 2; i++) expect((await ask(p)).tier).toBe('cloud');
    expect((await healthzTiers(p, 'chat')).local).toMatchObject({ state: 'down', consecutive_failures: 3 });
    expect((await healthzTiers(p, 'embed')).local).toMatchObject({ state: 'down', consecutive_failures: 3 });
    expect((await healthzTiers(p, 'embed')).cloud.state).toBe('healthy');

    // Not one embed request so far, yet the embed route skips its local tier at once.
    const embed = await ask(p, { model: 'embed' });
    expect(embed).toMatchObject({ status: 200, tier: 'cloud', attempts: 1 });
    expect(cloud.requests).toHaveLength(4);
    expect(p.logs.find((l) => l.event === 'tier_state' && l.route === 'embed' && l.tier === 'local' && l.to === 'down')?.reason).toMatch(
      /\(provider p_local\)/,
    );
  });

  it('a model-level failure (404 for the model) counts only against the tier whose model is missing', async () => {
    const local = await h.fake();
    const ok = healthyStream(['local']);
    const missingModel: Script = (ctx) =>
      ctx.body.model === 'missing-model' ? ctx.error(404, 'model "missing-model" not found', { code: 'model_not_found' }) : ok(ctx);
    local.always(missingModel);
    const { p } = await twoRoutesOnOneProvider(local.url, { chat: 'missing-model', embed: 'present-model' });

    for (let i = 0; i < 3; i++) expect((await ask(p)).tier).toBe('cloud');
    expect((await healthzTiers(p, 'chat')).local).toMatchObject({ state: 'down', consecutive_failures: 3 });
    expect((await healthzTiers(p, 'embed')).local).toMatchObject({ state: 'healthy', consecutive_failures: 0, failures: 0 });
    expect(await ask(p, { model: 'embed' })).toMatchObject({ status: 200, tier: 'local', attempts: 1 });
  });
});
