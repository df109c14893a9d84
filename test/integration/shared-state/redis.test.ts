import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, sleep, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml, type ConfigSpec, type RunningProxy } from '../../helpers/proxy.js';
import { RedisServer } from '../../helpers/redis-server.js';
import { instances, useRedis } from '../../helpers/state-kit.js';
import { SKIP_REDIS } from '../../helpers/redis-available.js';

const h = useHarness();
const redis = useRedis();

interface TierRow {
  name: string;
  weight: number;
  override: { weight: number } | null;
  alerts: string[];
}

async function tierRow(p: RunningProxy, tier: string): Promise<TierRow> {
  const view = (await (await fetch(`${p.origin}/admin/routes`)).json()) as { routes: { chat: { tiers: TierRow[] } } };
  return view.routes.chat.tiers.find((t) => t.name === tier) as TierRow;
}

function put(p: RunningProxy, tier: string, body: unknown): Promise<Response> {
  return fetch(`${p.origin}/admin/routes/chat/tiers/${tier}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function stateUp(p: RunningProxy): Promise<number | undefined> {
  return metric((await fetchMetrics(p)).samples, 'llm_state_backend_up');
}

describe.skipIf(SKIP_REDIS)('several instances on one Redis', () => {
  it('an override, a kill switch or an alert on one instance reaches the other within a second; a new instance starts with them', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const spec: ConfigSpec = {
      tiers: [
        { name: 'local', url: fake.url },
        { name: 'cloud', url: fake.url },
      ],
    };
    const [a, b] = await instances(h, 'redis', redis, spec);
    let started = performance.now();
    expect((await put(a, 'local', { weight: 25 })).status).toBe(200);
    await waitFor(async () => (await tierRow(b, 'local')).weight === 25, 1000, 'the override to reach the other instance');
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await tierRow(b, 'local')).override).toMatchObject({ weight: 25 });

    started = performance.now();
    const alert = {
      version: '4',
      status: 'firing',
      alerts: [{ status: 'firing', labels: { alertname: 'CloudSlow', route: 'chat', tier: 'cloud' }, fingerprint: 'fp1' }],
    };
    expect(
      (await fetch(`${b.origin}/admin/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alert) })).status,
    ).toBe(200);
    await waitFor(async () => (await tierRow(a, 'cloud')).weight === 0, 1000, 'the alert to reach the other instance');
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await tierRow(a, 'cloud')).alerts).toEqual(['CloudSlow']);

    // A third instance joining later starts with what the others decided.
    const yaml = configYaml({ ...spec, top: { state: a.server.app.config.state } });
    const c = await h.proxy(yaml);
    await waitFor(
      async () => (await tierRow(c, 'local')).weight === 25 && (await tierRow(c, 'cloud')).weight === 0,
      3000,
      'the new instance to load the overrides',
    );

    started = performance.now();
    expect((await fetch(`${c.origin}/admin/routes/chat/tiers/local`, { method: 'DELETE' })).status).toBe(200);
    await waitFor(async () => (await tierRow(a, 'local')).weight === 100 && (await tierRow(b, 'local')).weight === 100, 1000, 'the clear to reach both');
    expect(performance.now() - started).toBeLessThan(1000);
    // The kill switch holds for the planner of the other instance: no request goes to cloud.
    await put(b, 'local', { weight: 0 });
    await waitFor(async () => (await tierRow(a, 'local')).weight === 0, 1000, 'the kill switch');
    const res = await chat(a, {});
    expect(res.headers.get('x-llm-route-tier')).toBeNull();
    expect(res.status).toBe(503);
  });

  it('a rollback tripped on one instance (its own numbers) takes the tier out on the other, and restores on both', async () => {
    const canary = await h.fake();
    const stable = await h.fake();
    canary.always((ctx) => ctx.error(500, 'canary broke'));
    stable.always((ctx) => ctx.json(200, completion('stable')));
    const [a, b] = await instances(h, 'redis', redis, {
      tiers: [
        {
          name: 'canary',
          url: canary.url,
          retry: { attempts: 1 },
          circuit: { failures: 100 },
          rollback: { error_rate: 0.5, window_s: 60, min_requests: 3, restore_after_s: 2 },
        },
        { name: 'stable', url: stable.url },
      ],
    });
    for (let i = 0; i < 3; i++) expect((await chat(a, {})).headers.get('x-llm-route-tier')).toBe('stable');
    const started = performance.now();
    await waitFor(async () => (await tierRow(b, 'canary')).weight === 0, 1000, 'the rollback on the other instance');
    expect(performance.now() - started).toBeLessThan(1000);
    const view = (await (await fetch(`${b.origin}/admin/routes`)).json()) as {
      routes: { chat: { tiers: Array<{ name: string; rollback: { reason: string } | null }> } };
    };
    expect(view.routes.chat.tiers[0].rollback?.reason).toMatch(/^error rate 100\.0% > 50\.0%/);
    const before = canary.requests.length;
    expect((await chat(b, {})).headers.get('x-llm-route-tier')).toBe('stable');
    expect(canary.requests).toHaveLength(before);
    // restore_after_s lapses on both at the same moment (absolute time).
    await waitFor(async () => (await tierRow(a, 'canary')).weight === 100 && (await tierRow(b, 'canary')).weight === 100, 5000, 'the restore on both');
  });

  it('Redis killed mid-load: no request fails because of it, llm_state_backend_up goes 0 then back to 1, and the instances rejoin', async () => {
    const server = await RedisServer.start();
    h.defer(() => server.stop());
    const fake = await h.fake();
    fake.always(async (ctx) => {
      await ctx.wait(5);
      ctx.json(200, completion('fine', { prompt_tokens: 1, completion_tokens: 2 }));
    });
    const prefix = `kill-${randomUUID().slice(0, 8)}:`;
    const yaml = configYaml({
      tiers: [{ name: 'cloud', url: fake.url, provider: { limits: { rpm: 600_000, tpm: 100_000_000, concurrency: 500, queue_ms: 2000 } } }],
      top: { state: { redis: server.url, prefix }, budgets: [{ scope: 'route:chat', per: 'day', tokens: 100_000_000 }] },
    });
    const a = await h.proxy(yaml);
    const b = await h.proxy(yaml);
    await waitFor(() => a.server.state.up && b.server.state.up, 5000, 'both instances on Redis');
    expect(await stateUp(a)).toBe(1);

    const statuses = new Map<number, number>();
    let stop = false;
    let n = 0;
    const load = Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        while (!stop) {
          const keyed = n++ % 3 === 0 ? { headers: { 'idempotency-key': `load-${randomUUID()}` } } : {};
          const res = await chat(i % 2 ? b : a, { max_tokens: 10 }, keyed);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          await res.arrayBuffer();
        }
      }),
    );
    await sleep(400);
    await server.kill();
    await waitFor(async () => (await stateUp(a)) === 0 && (await stateUp(b)) === 0, 3000, 'llm_state_backend_up 0');
    await sleep(600); // serving on local state meanwhile
    const restartedAt = performance.now();
    await server.restart();
    await waitFor(async () => (await stateUp(a)) === 1 && (await stateUp(b)) === 1, 10_000, 'llm_state_backend_up back to 1');
    const rejoinMs = performance.now() - restartedAt;
    await sleep(300);
    stop = true;
    await load;
    expect([...statuses.keys()]).toEqual([200]);
    expect(statuses.get(200)).toBeGreaterThan(100);
    expect(rejoinMs).toBeLessThan(10_000);
    for (const p of [a, b]) {
      const degraded = p.logs.find((l) => l.event === 'state_degraded');
      expect(degraded).toMatchObject({ backend: 'redis', target: `127.0.0.1:${server.port}/0` });
      expect(p.logs.find((l) => l.event === 'state_recovered')).toBeDefined();
    }
    // Rejoined: an override travels again.
    await put(a, 'cloud', { weight: 40 });
    await waitFor(async () => (await tierRow(b, 'cloud')).weight === 40, 1000, 'an override after the rejoin');
  });

  it('apart, each instance keeps its changes; back together, the newer change of a tier wins on both', async () => {
    const server = await RedisServer.start();
    h.defer(() => server.stop());
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const yaml = configYaml({
      tiers: [
        { name: 'local', url: fake.url },
        { name: 'cloud', url: fake.url },
      ],
      top: { state: { redis: server.url, prefix: 'apart:' } },
    });
    const a = await h.proxy(yaml);
    const b = await h.proxy(yaml);
    await waitFor(() => a.server.state.up && b.server.state.up, 5000, 'both on Redis');
    await server.kill();
    await waitFor(() => !a.server.state.up && !b.server.state.up, 3000, 'both apart');
    await put(a, 'local', { weight: 10 });
    await sleep(5);
    await put(b, 'local', { weight: 20 });
    await put(a, 'cloud', { weight: 30 });
    expect((await tierRow(b, 'local')).weight).toBe(20);
    expect((await tierRow(b, 'cloud')).weight).toBe(100);
    await server.restart();
    await waitFor(async () => (await tierRow(a, 'local')).weight === 20 && (await tierRow(b, 'cloud')).weight === 30, 10_000, 'the newer changes on both');
    expect((await tierRow(b, 'local')).weight).toBe(20);
    expect((await tierRow(a, 'cloud')).weight).toBe(30);
  });

  it('a change older than the one Redis holds does not land over it (two instances back from an outage push at once): the pusher takes the newer', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const prefix = `older-${randomUUID().slice(0, 8)}:`;
    const p = await h.proxy(configYaml({ tiers: [{ name: 'local', url: fake.url }], top: { state: { redis: redis().url, prefix } } }));
    await waitFor(() => p.server.state.up, 5000, 'the instance to reach Redis');
    const client = new Redis(redis().url);
    h.defer(() => client.quit());
    const field = 'chat\u0000local';
    expect((await put(p, 'local', { weight: 10 })).status).toBe(200);
    await waitFor(async () => (await client.hget(`${prefix}weights`, field)) !== null, 2000, 'the change stored');
    // Another instance's change, a minute newer, stored while this one's announcement was not heard.
    const newer = JSON.parse((await client.hget(`${prefix}weights`, field)) as string) as { layers: { updatedAt: number; admin: { weight: number } } };
    newer.layers.updatedAt += 60_000;
    newer.layers.admin.weight = 70;
    await client.hset(`${prefix}weights`, field, JSON.stringify(newer));

    expect((await put(p, 'local', { weight: 40 })).status).toBe(200);
    await waitFor(async () => (await tierRow(p, 'local')).weight === 70, 2000, 'the newer change taken');
    const stored = JSON.parse((await client.hget(`${prefix}weights`, field)) as string) as typeof newer;
    expect(stored.layers).toMatchObject({ updatedAt: newer.layers.updatedAt, admin: { weight: 70 } });
  });

  it('Redis not there at start: the instance serves on local state and says so, then joins when Redis comes up', async () => {
    const server = await RedisServer.start();
    h.defer(() => server.stop());
    await server.kill();
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('x')));
    const p = await h.proxy(
      configYaml({ tiers: [{ name: 'cloud', url: fake.url, provider: { limits: { rpm: 6000 } } }], top: { state: { redis: server.url, prefix: 'late:' } } }),
    );
    expect((await chat(p, {}, { headers: { 'idempotency-key': 'late-1' } })).status).toBe(200);
    expect(await stateUp(p)).toBe(0);
    await waitFor(() => p.logs.some((l) => l.event === 'state_degraded'), 3000, 'state_degraded');
    const routes = (await (await fetch(`${p.origin}/admin/routes`)).json()) as { state: unknown };
    expect(routes.state).toEqual({ backend: 'redis', up: false });
    await server.restart();
    await waitFor(async () => (await stateUp(p)) === 1, 10_000, 'the instance to join');
    expect((await chat(p, {})).status).toBe(200);
    // The URL's host and port are named; never anything else of it.
    expect(JSON.stringify(p.logs)).not.toContain('redis://');
  });
});
