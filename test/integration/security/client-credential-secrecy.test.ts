import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicError, anthropicMessage, anthropicTextStream } from '../../helpers/anthropic-upstream.js';
import { buildPrivateCli, runCli, type CliProcess } from '../../helpers/cli.js';
import { completion, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

// A real `llm-route serve` with a from_client tier, asked with a distinctive credential:
// answered, refused with an upstream 401 and a 500 that both echo it, failed over, rejected
// with a 400 that echoes it, counted, and asked without one. Then every output of the run
// is searched for it: stdout, stderr, the usage database's bytes, /metrics, /healthz, the
// admin API, `usage --json`, `incidents --json` and a postmortem. It is in none of them.

const h = useHarness();
const tempDir = useTempDirs();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
});
afterAll(() => cli?.remove());

// Distinctive pieces: found anywhere, whole or in part, is a leak.
const LOGIN = 'sk-ant-oat01-Zq7LEAKCANARYoauth9Xv2';
const KEY = 'sk-ant-api03-Wm4LEAKCANARYkey3Pd8';
const CANARY = 'LEAKCANARY';
// The fakes are on loopback, where warm-ups are on by default: they would take the scripted answers.
const NO_WARMUP = { warmup: false };

function cliRun(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [cli.bin, ...args], { encoding: 'utf8' });
  return { status: out.status, stdout: out.stdout, stderr: out.stderr };
}

async function serve(file: string): Promise<{ proc: CliProcess; url: string }> {
  const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { LLM_ROUTE_CONFIG: undefined });
  h.defer(() => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  });
  const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
  return { proc, url: listening.url.replace(/\/v1$/, '') }; // the line gives the OpenAI base URL
}

function messages(url: string, headers: Record<string, string>, body: Record<string, unknown> = {}, path = '/v1/messages'): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({ model: 'chat', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

describe('a client credential in a real serve run', () => {
  it('is in no output of llm-route: logs, usage database, metrics, health, admin API, usage and incidents', async () => {
    const local = await h.fake();
    local.always((ctx) => ctx.error(500, 'local model crashed'));
    const plan = await h.fake();
    // Scripted answers for its POSTs only: serve's start-up notice asks its model list (a GET) first.
    const planAnswers: Script[] = [
      anthropicTextStream(['answered ', 'by your plan']),
      (ctx) => anthropicError(ctx, 401, 'authentication_error', `invalid bearer token: ${LOGIN}`),
      (ctx) => anthropicError(ctx, 500, 'api_error', `internal error while checking ${KEY}`),
      (ctx) => anthropicError(ctx, 400, 'invalid_request_error', `bad request from the holder of ${LOGIN}`),
      (ctx) => ctx.json(200, { input_tokens: 7 }),
      (ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'whole answer' }])),
    ];
    plan.always((ctx) => {
      if (ctx.req.method === 'GET') return ctx.json(200, { data: [], has_more: false });
      const script = planAnswers.shift();
      return script ? script(ctx) : ctx.error(500, 'no script for this request');
    });
    const backup = await h.fake();
    backup.always((ctx) => (ctx.body.stream ? healthyStream(['from ', 'the backup'])(ctx) : ctx.json(200, completion('from the backup'))));
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(
      file,
      configYaml({
        tiers: [
          {
            name: 'local',
            url: local.url,
            health: NO_WARMUP,
            retry: { attempts: 1 },
            circuit: { failures: 100 },
            rollback: { error_rate: 0.5, window_s: 60, min_requests: 2 },
          },
          {
            name: 'plan',
            url: `http://127.0.0.1:${plan.port}`,
            type: 'anthropic',
            api_key: 'from_client',
            health: NO_WARMUP,
            retry: { attempts: 1 },
            price: { input_per_mtok: 3, output_per_mtok: 15 },
          },
          { name: 'backup', url: backup.url, api_key: 'sk-backup-provider-key', health: NO_WARMUP },
        ],
        top: { usage: { path: './usage.db' } },
      }),
    );
    const { proc, url } = await serve(file);
    const login = { authorization: `Bearer ${LOGIN}`, 'anthropic-beta': 'oauth-2025-04-20' };
    const bodies: string[] = [];
    const ask = async (res: Promise<Response>): Promise<Response> => {
      const answer = await res;
      bodies.push(JSON.stringify([...answer.headers]), await answer.clone().text());
      return answer;
    };

    // 1: answered by the plan (local fails first); 2 and 3: the plan refuses (401) and breaks (500), both echoing
    // a credential, and the backup answers; 4: a payload error that echoes it; 5: a token count; 6: a whole answer;
    // 7: no credential at all.
    expect((await ask(messages(url, login, { stream: true }))).status).toBe(200);
    expect((await ask(messages(url, login, { stream: true }))).status).toBe(200);
    expect((await ask(messages(url, { 'x-api-key': KEY }, { stream: true }))).status).toBe(200);
    const rejected = await ask(messages(url, login));
    expect(rejected.status).toBe(400);
    expect(await rejected.text()).toContain('bad request from the holder of [redacted]');
    expect((await ask(messages(url, { 'x-api-key': KEY }, {}, '/v1/messages/count_tokens'))).status).toBe(200);
    expect((await ask(messages(url, login))).status).toBe(200);
    expect((await ask(messages(url, {}))).status).toBe(200); // the backup takes it: the plan is skipped
    const badJson = await ask(
      fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"nope"' }),
    );
    expect(badJson.status).toBe(400);
    // The model-list GET of the start-up notice carried no credential: a health check never does.
    const gets = plan.requests.filter((r) => r.url === '/v1/models');
    const posts = plan.requests.filter((r) => r.url !== '/v1/models');
    expect(gets.map((r) => [r.headers.authorization, r.headers['x-api-key']])).toEqual(gets.map(() => [undefined, undefined]));
    expect(posts.map((r) => r.headers.authorization ?? r.headers['x-api-key'])).toEqual([
      `Bearer ${LOGIN}`,
      `Bearer ${LOGIN}`,
      KEY,
      `Bearer ${LOGIN}`,
      KEY,
      `Bearer ${LOGIN}`,
    ]);
    for (const seen of [...local.requests, ...backup.requests]) expect(JSON.stringify(seen.headers)).not.toContain(CANARY);

    await waitFor(() => proc.lines.filter((l) => l.includes('"event":"request"')).length >= 7, 5000, 'seven request lines');
    await waitFor(() => proc.lines.some((l) => l.includes('"event":"rollback"')), 5000, 'the rollback of local');
    const outputs: Record<string, string> = { answers: bodies.join('\n') };
    for (const path of ['/metrics', '/healthz', '/admin/routes', '/admin/alerts', '/v1/models']) {
      const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${LOGIN}` } });
      outputs[path] = `${res.status} ${await res.text()}`;
    }
    expect(outputs['/metrics']).toContain('llm_requests_total');
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    outputs.stdout = proc.lines.join('\n');
    outputs.stderr = proc.stderr();
    for (const suffix of ['', '-wal', '-shm', '-journal'])
      if (existsSync(db + suffix)) outputs[`usage.db${suffix}`] = readFileSync(db + suffix).toString('latin1');

    const usage = cliRun(['usage', '-c', file, '--json', '--by', 'credential']);
    expect(usage.status, usage.stderr).toBe(0);
    outputs.usage = usage.stdout + usage.stderr;
    const byCredential = JSON.parse(usage.stdout) as { groups: Array<{ key: string; requests: number }> };
    expect(byCredential.groups.find((g) => g.key === 'client')?.requests).toBe(3);
    const incidents = cliRun(['incidents', '-c', file, '--json']);
    expect(incidents.status, incidents.stderr).toBe(0);
    outputs.incidents = incidents.stdout + incidents.stderr;
    const [incident] = (JSON.parse(incidents.stdout) as { incidents: Array<{ id: number; tier: string }> }).incidents;
    expect(incident.tier).toBe('local');
    for (const args of [
      ['incidents', 'show', String(incident.id), '-c', file],
      ['incidents', 'show', String(incident.id), '-c', file, '--json'],
    ]) {
      const shown = cliRun(args);
      expect(shown.status, shown.stderr).toBe(0);
      outputs[args.join(' ')] = shown.stdout + shown.stderr;
    }

    // The run did what it should: the outputs above are of a run that saw the credential.
    expect(readRequests(db).map((r) => [r.tier, r.credential])).toEqual([
      ['plan', 'client'],
      ['backup', null],
      ['backup', null],
      ['plan', 'client'], // the payload error: the plan's own answer, passed on
      ['plan', 'client'],
      ['backup', null],
      [null, null],
    ]);
    expect(outputs.stdout).toContain('"credential":"client"');
    expect(outputs.stdout).toContain('invalid bearer token: [redacted]');
    expect(outputs.stdout).toContain('internal error while checking [redacted]');
    for (const [where, text] of Object.entries(outputs)) {
      expect(text, `${where} holds the credential`).not.toContain(CANARY);
      expect(text, `${where} holds the provider's key`).not.toContain('sk-backup-provider-key');
    }
  }, 60_000);
});
