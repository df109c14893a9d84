import { describe, expect, it } from 'vitest';
import { dashboardActions } from '../../src/cli/dashboard.js';
import { healthyStream } from '../helpers/fake-upstream.js';
import { useHarness } from '../helpers/harness.js';
import { chat, type RunningProxy } from '../helpers/proxy.js';

const h = useHarness();

describe('the UI keys act on the running proxy', () => {
  it('k kills a tier (no traffic reaches it) and restores it; q quits', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(healthyStream(['local']));
    cloud.always(healthyStream(['cloud']));
    const p: RunningProxy = await h.proxy({ tiers: [{ name: 'local', url: local.url }, { name: 'cloud', url: cloud.url }] });
    const quits: string[] = [];
    const actions = dashboardActions(p.server.app, (reason) => quits.push(reason));

    actions.setKill('chat', 'local', true);
    let res = await chat(p, { stream: true });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    await res.text();
    expect(local.requests).toHaveLength(0);

    actions.setKill('chat', 'local', false);
    res = await chat(p, { stream: true });
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    await res.text();

    actions.quit();
    expect(quits).toEqual(['q']);
  });
});
