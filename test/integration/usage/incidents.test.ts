import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli } from '../../helpers/cli.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { readAll, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml } from '../../helpers/proxy.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
});
afterAll(() => cli?.remove());

function json(args: string[]): any {
  const out = spawnSync(process.execPath, [cli.bin, ...args], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`exit ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

describe('a real rollback', () => {
  it('opens an incident whose postmortem numbers match `usage --json` for the same window', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.next(healthyStream(['a']), healthyStream(['b']));
    local.always((ctx) => ctx.error(503, 'overloaded'));
    cloud.always(healthyStream(['c', 'd']));
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const spec = {
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 }, circuit: { failures: 100 }, rollback: { error_rate: 0.5, window_s: 60, min_requests: 4 } },
        { name: 'cloud', url: cloud.url, price: { input_per_mtok: 1, output_per_mtok: 2 } },
      ],
      top: { usage: { path: db } },
    };
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, configYaml(spec));
    const proxy = await h.proxy(spec);

    // 2 answered by local, then 3 that fail at local and fail over (the 5th trips the rollback: 3 of 5 > 50%),
    // then 3 that go to cloud alone.
    for (let i = 0; i < 8; i++) expect((await readAll(await chat(proxy, { stream: true }))).error).toBeNull();
    await waitFor(() => proxy.logs.find((l) => l.event === 'rollback'), 3000, 'the rollback');
    await proxy.server.usage.flush();
    const rows = readRequests(db);
    expect(rows.map((r) => `${r.tier}${r.failover ? '*' : ''}`)).toEqual(['local', 'local', 'cloud*', 'cloud*', 'cloud*', 'cloud', 'cloud', 'cloud']);

    const { incidents } = json(['incidents', '-c', file, '--json']);
    expect(incidents).toHaveLength(1);
    const [incident] = incidents;
    expect(incident).toMatchObject({ route: 'chat', tier: 'local', kind: 'rollback', closed_at: null, affected_requests: 3, route_requests: 6 });
    expect(incident.trigger).toMatchObject({
      reason: 'error_rate',
      threshold: 0.5,
      first_bad_at: new Date(rows[2].started_at as number).toISOString(),
      error_rate_before: 0,
      error_rate_during: 1,
    });
    expect(incident.trigger.ttft_p99_before_ms).toBeGreaterThan(0);

    const usage = json(['usage', '-c', file, '--json', '--since', incident.trigger.first_bad_at, '--by', 'route']);
    expect(usage.groups).toHaveLength(1);
    expect(usage.groups[0].requests).toBe(incident.route_requests);
    expect(usage.groups[0].failovers).toBe(incident.affected_requests);
    const { numbers } = json(['incidents', 'show', String(incident.id), '-c', file, '--json']);
    expect(numbers.failed).toBe(usage.groups[0].errors);
    const byTier = json(['usage', '-c', file, '--json', '--since', incident.trigger.first_bad_at, '--by', 'tier']);
    const cloudGroup = byTier.groups.find((g: { key: string }) => g.key === 'chat/cloud');
    expect(cloudGroup.requests).toBe(incident.route_requests); // everything in the window went to cloud
    const failedOverCost = rows.slice(2, 5).reduce((sum, r) => sum + (r.cost_usd as number), 0);
    expect(numbers.affected_cost_usd).toBeCloseTo(failedOverCost, 12);

    // Clearing the rollback closes the incident.
    proxy.server.app.weights.clear('chat', 'local');
    await proxy.server.usage.flush();
    const after = json(['incidents', '-c', file, '--json']).incidents[0];
    expect(after.closed_at).not.toBeNull();
  }, 30_000);
});
