import { describe, expect, it } from 'vitest';
import { fetchMetrics, metric, openaiError, useHarness } from '../../helpers/harness.js';
import { admin, adminTiers, answer, ask, controlYaml } from '../../helpers/control-kit.js';

/**
 * POST /admin/alerts with Alertmanager webhooks (payload version 4): a firing alert whose
 * labels name `route` and `tier` (or `model_tier`) holds that tier at weight 0 until it resolves.
 */

const h = useHarness();

interface AlertSpec {
  status?: 'firing' | 'resolved';
  labels: Record<string, string>;
  fingerprint?: string;
}

/** An Alertmanager v4 webhook body, as Alertmanager sends it. */
function webhook(status: 'firing' | 'resolved', alerts: AlertSpec[]): Record<string, unknown> {
  return {
    version: '4',
    groupKey: '{}:{alertname="CanarySlow"}',
    truncatedAlerts: 0,
    status,
    receiver: 'llm-route',
    groupLabels: { alertname: alerts[0]?.labels.alertname ?? 'x' },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts: alerts.map((a) => ({
      status: a.status ?? status,
      labels: a.labels,
      annotations: { summary: 'canary TTFT p99 too high' },
      startsAt: '2025-01-01T00:00:00Z',
      endsAt: (a.status ?? status) === 'resolved' ? '2025-01-01T00:05:00Z' : '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph',
      ...(a.fingerprint !== undefined ? { fingerprint: a.fingerprint } : {}),
    })),
  };
}

async function setup() {
  const canary = await h.fake();
  const stable = await h.fake();
  canary.always(answer('canary'));
  stable.always(answer('stable'));
  const p = await h.proxy(
    controlYaml({
      tiers: [
        { name: 'canary', url: canary.url },
        { name: 'stable', url: stable.url },
      ],
    }),
  );
  return { canary, stable, p };
}

async function tiersOfRequests(p: { origin: string }, n: number): Promise<Array<string | null>> {
  const out: Array<string | null> = [];
  for (let i = 0; i < n; i++) out.push((await ask(p)).tier);
  return out;
}

const SLOW = { alertname: 'CanarySlow', route: 'chat', tier: 'canary', severity: 'page' };

describe('Alertmanager webhook', () => {
  it('a firing alert for {route, tier} switches the tier off; resolving it restores the weight', async () => {
    const { canary, p } = await setup();
    const fire = await admin(p, 'POST', '/admin/alerts', webhook('firing', [{ labels: SLOW, fingerprint: 'fp-slow' }]));
    expect(fire.status).toBe(200);
    expect(fire.json.applied).toEqual([{ route: 'chat', tier: 'canary', status: 'firing', alert: 'CanarySlow' }]);
    expect(fire.json.ignored).toEqual([]);

    expect(await tiersOfRequests(p, 4)).toEqual(['stable', 'stable', 'stable', 'stable']);
    expect(canary.requests).toHaveLength(0);
    const view = (await adminTiers(p)).canary;
    expect(view).toMatchObject({ weight: 0, configured_weight: 100, alerts: ['CanarySlow'] });
    expect(metric((await fetchMetrics(p)).samples, 'llm_tier_weight', { route: 'chat', tier: 'canary' })).toBe(0);
    expect(p.logs.find((l) => l.event === 'weight' && l.source === 'alert')).toMatchObject({ tier: 'canary', weight: 0 });

    const resolve = await admin(p, 'POST', '/admin/alerts', webhook('resolved', [{ labels: SLOW, fingerprint: 'fp-slow' }]));
    expect(resolve.status).toBe(200);
    expect(resolve.json.applied).toEqual([{ route: 'chat', tier: 'canary', status: 'resolved', alert: 'CanarySlow' }]);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, alerts: [] });
    expect(await tiersOfRequests(p, 2)).toEqual(['canary', 'canary']);
  });

  it('the model_tier label works too, and alerts without a fingerprint resolve by their labels', async () => {
    const { canary, p } = await setup();
    const labels = { alertname: 'CanaryErrors', route: 'chat', model_tier: 'canary' };
    const fire = await admin(p, 'POST', '/admin/alerts', webhook('firing', [{ labels }]));
    expect(fire.status).toBe(200);
    expect(fire.json.applied).toEqual([{ route: 'chat', tier: 'canary', status: 'firing', alert: 'CanaryErrors' }]);
    expect(await tiersOfRequests(p, 2)).toEqual(['stable', 'stable']);
    expect(canary.requests).toHaveLength(0);
    expect((await admin(p, 'POST', '/admin/alerts', webhook('resolved', [{ labels }]))).status).toBe(200);
    expect(await tiersOfRequests(p, 1)).toEqual(['canary']);
  });

  it('two alerts on one tier: it stays off until both resolve; an admin DELETE does not lift a firing alert', async () => {
    const { p } = await setup();
    const other = { ...SLOW, alertname: 'CanaryErrors' };
    await admin(
      p,
      'POST',
      '/admin/alerts',
      webhook('firing', [
        { labels: SLOW, fingerprint: 'a' },
        { labels: other, fingerprint: 'b' },
      ]),
    );
    expect((await adminTiers(p)).canary.alerts.sort()).toEqual(['CanaryErrors', 'CanarySlow']);
    await admin(p, 'POST', '/admin/alerts', webhook('resolved', [{ labels: SLOW, fingerprint: 'a' }]));
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 0, alerts: ['CanaryErrors'] });
    expect((await admin(p, 'DELETE', '/admin/routes/chat/tiers/canary')).status).toBe(200);
    expect((await adminTiers(p)).canary.weight).toBe(0);
    expect(await tiersOfRequests(p, 1)).toEqual(['stable']);
    await admin(p, 'POST', '/admin/alerts', webhook('resolved', [{ labels: other, fingerprint: 'b' }]));
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, alerts: [] });
  });

  it('alerts that name no route/tier, or an unknown tier, are listed as ignored (200), nothing changes', async () => {
    const { p } = await setup();
    const res = await admin(
      p,
      'POST',
      '/admin/alerts',
      webhook('firing', [
        { labels: { alertname: 'DiskFull', instance: 'db1' }, fingerprint: 'x' },
        { labels: { alertname: 'OnlyRoute', route: 'chat' }, fingerprint: 'y' },
        { labels: { alertname: 'Ghost', route: 'chat', tier: 'ghost' }, fingerprint: 'z' },
        { labels: { alertname: 'GhostRoute', route: 'nope', tier: 'canary' }, fingerprint: 'w' },
      ]),
    );
    expect(res.status).toBe(200);
    expect(res.json.applied).toEqual([]);
    expect(res.json.ignored.map((i: { alert: string }) => i.alert)).toEqual(['DiskFull', 'OnlyRoute', 'Ghost', 'GhostRoute']);
    for (const i of res.json.ignored) expect(typeof i.reason).toBe('string');
    const tiers = await adminTiers(p);
    expect(tiers.canary).toMatchObject({ weight: 100, alerts: [] });
    expect(tiers.stable).toMatchObject({ weight: 100, alerts: [] });
  });

  it.each([
    ['not JSON', 'alerts: firing'],
    ['no alerts array', { version: '4', status: 'firing' }],
    ['alerts not an array', { version: '4', alerts: { labels: SLOW } }],
    ['an unsupported version', { ...webhook('firing', [{ labels: SLOW }]), version: '3' }],
  ])('a malformed payload (%s) → 400 with a reason, nothing changes', async (_what, body) => {
    const { p } = await setup();
    const res = await admin(p, 'POST', '/admin/alerts', body);
    expect(res.status).toBe(400);
    expect(openaiError(res.json).message.length).toBeGreaterThan(10);
    expect((await adminTiers(p)).canary).toMatchObject({ weight: 100, alerts: [] });
  });
});
