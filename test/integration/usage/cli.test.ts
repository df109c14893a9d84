import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { RequestFinished } from '../../../src/telemetry/events.js';
import { tokenCounter } from '../../../src/tokens/count.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { buildPrivateCli } from '../../helpers/cli.js';
import { configYaml } from '../../helpers/proxy.js';
import { finished, useTempDirs } from '../../helpers/usage-kit.js';

const tempDir = useTempDirs();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
});
afterAll(() => cli?.remove());

const PRICE = { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.5 };

function run(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [cli.bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** A tier file whose usage log is `db`, and a UsageLog writing to it (the public writer). */
function setup(now: () => number = Date.now): { file: string; db: string; bus: TelemetryBus; log: UsageLog } {
  const dir = tempDir();
  const db = join(dir, 'usage.db');
  const file = join(dir, 'llm-route.yaml');
  writeFileSync(
    file,
    configYaml({
      tiers: [
        { name: 'local', url: 'http://127.0.0.1:9/v1' },
        { name: 'cloud', url: 'http://127.0.0.1:9/v1', price: PRICE },
      ],
      top: { usage: { path: './usage.db' } },
    }),
  );
  const bus = new TelemetryBus();
  return { file, db, bus, log: new UsageLog(bus, loadConfig(file), { now }) };
}

const local = (fields: Partial<RequestFinished>): RequestFinished =>
  finished({
    tier: 'local',
    provider: 'p_local',
    model: 'local-model',
    attempts: [{ tier: 'local', attempt: 1, outcome: 'ok', ms: (fields.ttftMs ?? 100) - 10 }],
    ...fields,
  });
const viaCloud = (fields: Partial<RequestFinished>): RequestFinished =>
  finished({
    attempts: [
      { tier: 'local', attempt: 1, outcome: 'ttft_timeout', ms: 2000 },
      { tier: 'cloud', attempt: 1, outcome: 'ok', ms: 400 },
    ],
    ...fields,
  });

describe('llm-route usage', () => {
  it('--json has the shape docs/usage.md gives and numbers recomputed from rows written by the public writer', async () => {
    const { file, bus, log } = setup();
    const now = Date.now();
    const at = (minutesAgo: number): number => now - minutesAgo * 60_000;
    // The local server reports its cache once (a miss: 0 read from it) and then says nothing of it.
    for (const [i, ttft] of [100, 200, 300, 400].entries())
      bus.emit(local({ startedAt: at(50 - i), ttftMs: ttft, usage: { prompt_tokens: 10, completion_tokens: 20, ...(i === 0 ? { cached_tokens: 0 } : {}) } }));
    bus.emit(viaCloud({ startedAt: at(40), ttftMs: 2400, usage: { prompt_tokens: 100, completion_tokens: 50, cached_tokens: 40 } }));
    bus.emit(viaCloud({ startedAt: at(30), ttftMs: 2600, usage: { prompt_tokens: 100, completion_tokens: 50 } }));
    bus.emit(
      finished({
        startedAt: at(20),
        tier: null,
        provider: null,
        model: null,
        status: 502,
        outcome: 'failed',
        ttftMs: undefined,
        usage: undefined,
        attempts: [
          { tier: 'local', attempt: 1, outcome: 'server_error', status: 503, ms: 5 },
          { tier: 'cloud', attempt: 1, outcome: 'server_error', status: 503, ms: 6 },
        ],
      }),
    );
    bus.emit(
      finished({
        startedAt: at(10),
        stream: false,
        ttftMs: undefined,
        usage: undefined,
        estimate: { promptText: 'What is the capital of France?', completionText: 'Paris.' },
      }),
    );
    bus.emit(finished({ startedAt: now - 2 * 86_400_000, ttftMs: 999, usage: { prompt_tokens: 1, completion_tokens: 1 } })); // outside 24h
    await log.close();

    const counter = await tokenCounter();
    const estPrompt = counter.count('What is the capital of France?');
    const estDone = counter.count('Paris.');
    const cost = (p: number, c: number, cached = 0): number => ((p - cached) * 1 + cached * 0.5 + c * 2) / 1e6;

    const res = run(['usage', '-c', file, '--json']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(Object.keys(report)).toEqual(['since', 'until', 'by', 'groups', 'totals']);
    expect(report.by).toBe('route');
    expect(Date.parse(report.until) - Date.parse(report.since)).toBe(86_400_000);
    expect(report.groups).toHaveLength(1);
    const [chat] = report.groups;
    expect(Object.keys(chat)).toEqual([
      'key',
      'requests',
      'failovers',
      'errors',
      'ttft_p50_ms',
      'ttft_p95_ms',
      'prompt_tokens',
      'completion_tokens',
      'cached_tokens',
      'cache_hit_rate',
      'estimated_requests',
      'cost_usd',
      'saved_usd',
    ]);
    expect(chat).toMatchObject({
      key: 'chat',
      requests: 8,
      failovers: 3,
      errors: 1,
      // client-seen TTFT of the 6 streams, nearest rank: 100 200 300 400 2400 2600
      ttft_p50_ms: 300,
      ttft_p95_ms: 2600,
      prompt_tokens: 240 + estPrompt,
      completion_tokens: 180 + estDone,
      cached_tokens: 40,
      // 40 of the 110 prompt tokens whose servers said anything of their cache
      cache_hit_rate: Math.round((40 / 110) * 10_000) / 10_000,
      estimated_requests: 1,
    });
    expect(chat.cost_usd).toBeCloseTo(cost(100, 50, 40) + cost(100, 50) + cost(estPrompt, estDone), 12);
    expect(chat.saved_usd).toBeCloseTo(4 * cost(10, 20), 12);
    const { key: _key, ...sameAsTotals } = chat;
    expect(report.totals).toEqual(sameAsTotals);

    const byTier = JSON.parse(run(['usage', '-c', file, '--json', '--by', 'tier']).stdout);
    expect(byTier.groups.map((g: { key: string; requests: number }) => [g.key, g.requests])).toEqual([
      ['chat/local', 4],
      ['chat/cloud', 3],
      ['chat/none', 1],
    ]);
    expect(byTier.groups.find((g: { key: string }) => g.key === 'chat/none')).toMatchObject({ ttft_p50_ms: null, ttft_p95_ms: null, cost_usd: 0, errors: 1 });
    const rates = Object.fromEntries(byTier.groups.map((g: { key: string; cache_hit_rate: number | null }) => [g.key, g.cache_hit_rate]));
    expect(rates).toEqual({ 'chat/local': 0, 'chat/cloud': 0.4, 'chat/none': null });
    const byModel = JSON.parse(run(['usage', '-c', file, '--json', '--by', 'model']).stdout);
    expect(byModel.groups.map((g: { key: string }) => g.key).sort()).toEqual(['(none)', 'cloud-model', 'local-model']);
    const byProvider = JSON.parse(run(['usage', '-c', file, '--json', '--by', 'provider']).stdout);
    expect(byProvider.groups.map((g: { key: string }) => g.key).sort()).toEqual(['(none)', 'p_cloud', 'p_local']);

    const week = JSON.parse(run(['usage', '-c', file, '--json', '--since', '7d', '--by', 'day']).stdout);
    expect(week.totals.requests).toBe(9);
    expect(week.groups.map((g: { key: string }) => g.key)).toEqual([
      ...new Set([now - 2 * 86_400_000, at(50), at(10)].map((t) => new Date(t).toISOString().slice(0, 10))),
    ]);
    const iso = JSON.parse(run(['usage', '-c', file, '--json', '--since', new Date(at(35)).toISOString()]).stdout);
    expect(iso.totals).toMatchObject({ requests: 3, failovers: 2, errors: 1, ttft_p50_ms: 2600 });

    const table = run(['usage', '-c', file]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ROUTE\s+REQUESTS\s+FAILOVERS\s+ERRORS\s+TTFT p50\s+TTFT p95/);
    expect(table.stdout).toMatch(/\nchat\s+8\s+3\s+1\s+300 ms\s+2,600 ms|\nchat\s+8\s+3\s+1\s+300 ms\s+2600 ms/);
    expect(table.stdout).toMatch(/CACHED\s+CACHE HIT\s+ESTIMATED/);
    expect(table.stdout).toMatch(/\nchat\s.*\s40\s+36\.4%\s+1\s/);
    const tierTable = run(['usage', '-c', file, '--by', 'tier']).stdout;
    expect(tierTable).toMatch(/\nchat\/local\s.*\s0\s+0\.0%\s/);
    expect(tierTable).toMatch(/\nchat\/none\s.*\s0\s+-\s/);
  }, 30_000);

  it("--by protocol: the client protocols apart, Ollama's API among them", async () => {
    const { file, bus, log } = setup();
    const now = Date.now();
    bus.emit(local({ startedAt: now - 60_000, protocol: 'ollama', usage: { prompt_tokens: 10, completion_tokens: 20 } }));
    bus.emit(local({ startedAt: now - 50_000, protocol: 'ollama', usage: { prompt_tokens: 10, completion_tokens: 20 } }));
    bus.emit(local({ startedAt: now - 40_000, protocol: 'messages', usage: { prompt_tokens: 5, completion_tokens: 5 } }));
    await log.close();
    const byProtocol = JSON.parse(run(['usage', '-c', file, '--json', '--by', 'protocol']).stdout);
    expect(byProtocol.groups.map((g: { key: string; requests: number; completion_tokens: number }) => [g.key, g.requests, g.completion_tokens])).toEqual([
      ['ollama', 2, 40],
      ['messages', 1, 5],
    ]);
    expect(run(['usage', '-c', file, '--by', 'protocol']).stdout).toMatch(/\nPROTOCOL\s+REQUESTS[^\n]*\nollama\s+2\s/);
  }, 30_000);

  it('exit 2 naming the path when there is no database, and for bad flags', () => {
    const dir = tempDir();
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1' }], top: { usage: { path: './nothing-here.db' } } }));
    const missing = run(['usage', '-c', file, '--json']);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain(join(dir, 'nothing-here.db'));
    // No tier file anywhere: the default path in the state dir is named.
    const empty = tempDir();
    const noConfig = spawnSync(process.execPath, [cli.bin, 'usage'], {
      encoding: 'utf8',
      cwd: empty,
      env: { ...process.env, LLM_ROUTE_CONFIG: '', XDG_STATE_HOME: join(empty, 'state') },
    });
    expect(noConfig.status).toBe(2);
    expect(noConfig.stderr).toContain(join(empty, 'state', 'llm-route', 'usage.db'));
    expect(run(['usage', '-c', file, '--since', 'yesterday']).code).toBe(2);
    expect(run(['usage', '-c', file, '--by', 'colour']).stderr).toContain('expected one of route, tier, model, provider, day');
  });
});

describe('llm-route incidents', () => {
  it('lists incidents and drafts a postmortem whose numbers come from the rows', async () => {
    const base = Date.now() - 3_600_000;
    let clock = base;
    const { file, bus, log } = setup(() => clock);
    const at = (s: number): number => base + s * 1000;
    for (const [i, ms] of [90, 180, 270, 360].entries())
      bus.emit(local({ startedAt: at(i * 10), ttftMs: ms + 10, usage: { prompt_tokens: 10, completion_tokens: 20 } }));
    bus.emit(viaCloud({ startedAt: at(60), ttftMs: 2400, usage: { prompt_tokens: 100, completion_tokens: 50 } }));
    bus.emit(viaCloud({ startedAt: at(65), ttftMs: 2400, usage: { prompt_tokens: 100, completion_tokens: 50 }, chunkErrors: 0 }));
    bus.emit(
      finished({
        startedAt: at(70),
        tier: null,
        provider: null,
        model: null,
        status: 502,
        outcome: 'failed',
        ttftMs: undefined,
        usage: undefined,
        attempts: [
          { tier: 'local', attempt: 1, outcome: 'server_error', status: 503, ms: 5 },
          { tier: 'cloud', attempt: 1, outcome: 'server_error', status: 503, ms: 6 },
        ],
      }),
    );
    clock = at(75);
    bus.emit({ type: 'rollback', route: 'chat', tier: 'local', reason: 'error_rate', observed: 0.75, threshold: 0.5, requests: 4, windowS: 60 });
    bus.emit({
      type: 'weight',
      route: 'chat',
      tier: 'local',
      weight: 0,
      configured: 100,
      source: 'rollback',
      reason: 'error rate 75% > 50%',
      layers: { admin: null, alerts: [], rollback: 'error rate 75% > 50%' },
    });
    bus.emit(finished({ startedAt: at(80), usage: { prompt_tokens: 100, completion_tokens: 50 } }));
    clock = at(120);
    bus.emit({
      type: 'weight',
      route: 'chat',
      tier: 'local',
      weight: 100,
      configured: 100,
      source: 'expired',
      reason: 'rollback restored',
      layers: { admin: null, alerts: [], rollback: null },
    });
    await log.close();

    const list = run(['incidents', '-c', file, '--json']);
    expect(list.stderr).toBe('');
    const { incidents } = JSON.parse(list.stdout);
    expect(incidents).toHaveLength(1);
    const [incident] = incidents;
    expect(Object.keys(incident)).toEqual(['id', 'route', 'tier', 'kind', 'opened_at', 'closed_at', 'trigger', 'affected_requests', 'route_requests']);
    expect(incident).toMatchObject({
      route: 'chat',
      tier: 'local',
      kind: 'rollback',
      opened_at: new Date(at(75)).toISOString(),
      closed_at: new Date(at(120)).toISOString(),
      affected_requests: 3,
      route_requests: 4,
      trigger: {
        reason: 'error_rate',
        threshold: 0.5,
        first_bad_at: new Date(at(60)).toISOString(),
        time_to_mitigation_ms: 15_000,
        ttft_p99_before_ms: 360,
        ttft_p99_during_ms: null,
        error_rate_before: 0,
        error_rate_during: 1,
        chunk_errors_before: 0,
        chunk_errors_during: 0,
      },
    });

    const show = run(['incidents', 'show', String(incident.id), '-c', file]);
    expect(show.code).toBe(0);
    const text = show.stdout;
    expect(text).toContain(`Incident #${incident.id}: automated rollback of tier "local" in route "chat"`);
    expect(text).toMatch(/Root cause\n/);
    expect(text).toContain('TTFT p99 of "local" (its own, attempt start to first token): 360 ms before (4 streams) vs n/a during (0 streams)');
    expect(text).toContain('Error rate: 0.0% before (0 of 4 attempts) vs 100.0% during (3 of 3).');
    expect(text).toContain('Failed attempts during: ttft_timeout 2, server_error 1.');
    expect(text).toMatch(
      /Impact\n {2}3 of 4 requests of route "chat" \(75\.0%\) were affected from the first bad request to the close: 2 failed over, 1 got an error\./,
    );
    expect(text).toContain('15.0 s until the rollback');
    expect(text).toMatch(/Preventive actions\n {2}- ttft_timeout caused 2 of 3 failures: no first token came within ttft_ms/);
    expect(text).toContain('75.0% of the route was affected: roll the tier out as a canary');

    const json = JSON.parse(run(['incidents', 'show', String(incident.id), '-c', file, '--json']).stdout);
    expect(json.incident).toEqual(incident);
    expect(json.numbers).toMatchObject({ failed_over: 2, failed: 1, answered_by: [{ tier: 'cloud', requests: 2 }] });
    expect(json.postmortem).toBe(text.trimEnd());

    // The same window in `usage`: the route's requests and its failovers are the incident's.
    const usage = JSON.parse(run(['usage', '-c', file, '--json', '--since', incident.trigger.first_bad_at]).stdout);
    expect(usage.groups[0]).toMatchObject({
      key: 'chat',
      requests: incident.route_requests,
      failovers: incident.affected_requests,
      errors: json.numbers.failed,
    });

    expect(run(['incidents', 'show', '999', '-c', file]).code).toBe(2);
    expect(run(['incidents', '-c', file]).stdout).toMatch(/ID\s+KIND\s+TIER\s+OPENED\s+CLOSED\s+AFFECTED\n\s*1\s+rollback\s+chat\/local/);
  }, 30_000);
});
