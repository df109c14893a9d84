import { describe, expect, it } from 'vitest';
import { dashboardActions } from '../../../src/cli/dashboard.js';
import type { TelemetryEvent } from '../../../src/telemetry/events.js';
import { DashboardState } from '../../../src/ui/dashboard-state.js';
import { FakeUpstream, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { chat, type RunningProxy, startProxy } from '../../helpers/proxy.js';

const h = useHarness();

describe('the UI keys act on the running proxy', () => {
  it('k kills a tier (no traffic reaches it) and restores it; q quits', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(healthyStream(['local']));
    cloud.always(healthyStream(['cloud']));
    const p: RunningProxy = await h.proxy({
      tiers: [
        { name: 'local', url: local.url },
        { name: 'cloud', url: cloud.url },
      ],
    });
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

  it('k on a rolled-back tier never restores it: its kill switch comes and goes, the rollback stays', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(healthyStream(['local']));
    cloud.always(healthyStream(['cloud']));
    const p: RunningProxy = await h.proxy({
      tiers: [
        { name: 'local', url: local.url },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const actions = dashboardActions(p.server.app, () => undefined);
    const weights = p.server.app.weights;
    weights.rollBack('chat', 'local', 'error rate 50% > 40%');

    actions.setKill('chat', 'local', true);
    expect(weights.view('chat', 'local')).toMatchObject({ effective: 0, override: { weight: 0 }, rollback: { reason: 'error rate 50% > 40%' } });
    actions.setKill('chat', 'local', false);
    expect(weights.view('chat', 'local')).toMatchObject({ effective: 0, override: null, rollback: { reason: 'error rate 50% > 40%' } });
    const res = await chat(p, { stream: true });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    await res.text();
    expect(local.requests).toHaveLength(0);
  });

  it('p probes every tier and each shows its result in the log, also when all are healthy', async () => {
    const local = await FakeUpstream.start();
    const cloud = await FakeUpstream.start();
    h.defer(() => local.close());
    h.defer(() => cloud.close());
    const lists = (model: string) => (ctx: Parameters<Parameters<FakeUpstream['always']>[0]>[0]) =>
      ctx.req.method === 'GET' ? ctx.json(200, { object: 'list', data: [{ id: model }] }) : healthyStream(['p'])(ctx);
    local.always(lists('local-model'));
    cloud.always(lists('cloud-model'));
    const p: RunningProxy = await startProxy({
      tiers: [
        { name: 'local', url: local.url },
        { name: 'cloud', url: cloud.url },
      ],
    });
    h.defer(() => p.close());
    const ui = new DashboardState();
    const events: TelemetryEvent[] = [];
    p.server.app.telemetry.subscribe((event) => {
      events.push(event);
      ui.apply(event, Date.now());
    });

    dashboardActions(p.server.app, () => undefined).probe();
    const deadline = Date.now() + 5_000;
    while (events.filter((e) => e.type === 'health_check').length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

    const lines = ui.snapshot(p.server.app.config, Date.now()).log.map((l) => `${l.level} ${l.text}`);
    expect(lines).toEqual([
      expect.stringMatching(/^good probe chat\/(local|cloud) ok, ttft \d+ms$/),
      expect.stringMatching(/^good probe chat\/(local|cloud) ok, ttft \d+ms$/),
    ]);
    expect(new Set(lines.map((l) => /chat\/(\w+)/.exec(l)?.[1]))).toEqual(new Set(['local', 'cloud']));
    expect(local.requests.some((r) => r.body.max_tokens === 1)).toBe(true);
  });
});
