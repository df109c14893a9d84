import { writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { checkTier } from '../../../src/health/check-tier.js';
import { parseMockOptions } from '../../../src/mock/options.js';
import { startMock } from '../../../src/mock/server.js';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { chunk, healthyStream } from '../../helpers/fake-upstream.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { llamaProps, openaiServer } from '../../helpers/fit-servers.js';

const h = useHarness();
const REFUSED_URL = 'http://127.0.0.1:1/v1';

// ─── servers ────────────────────────────────────────────────────────────────

/** The real `llm-route mock`; its /v1/models lists only its name. */
async function healthyMock(name = 'm'): Promise<string> {
  const mock = await startMock(parseMockOptions({ name }));
  h.defer(() => mock.close());
  return mock.url;
}

/** Accepts connections and never says a word. */
async function silentServer(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.defer(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

/** Ollama as seen from outside: /api/tags and /v1/chat/completions, but no /v1/models. */
async function fakeOllama(tags: string[]): Promise<string> {
  const server: HttpServer = createHttpServer((req, res) => {
    if (req.method === 'GET' && req.url === '/api/tags') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ models: tags.map((name) => ({ name, model: name, size: 1 })) }));
    } else if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      let text = '';
      req.on('data', (data: Buffer) => (text += data));
      req.on('end', () => {
        const model = String((JSON.parse(text) as { model?: string }).model);
        if (!tags.includes(model) && !tags.includes(`${model}:latest`)) {
          res.writeHead(404, { 'content-type': 'application/json' });
          return res.end(
            JSON.stringify({ error: { message: `model "${model}" not found, try pulling it first`, type: 'api_error', param: null, code: null } }),
          );
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'p' }))}\n\n`);
        res.end(`data: ${JSON.stringify(chunk({}, 'length'))}\n\ndata: [DONE]\n\n`);
      });
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.defer(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

// ─── tier files ─────────────────────────────────────────────────────────────

interface TierSpec {
  name: string;
  url: string;
  model: string;
  route?: string;
  api_key?: string;
  headers?: Record<string, string>;
}

/** One provider per tier, so each tier's URL and key are its own. */
function tierFile(specs: TierSpec[]): string {
  const providers: Record<string, unknown> = {};
  const routes: Record<string, { tiers: unknown[] }> = {};
  for (const spec of specs) {
    providers[`p_${spec.name}`] = {
      type: 'openai',
      base_url: spec.url,
      ...(spec.api_key ? { api_key: spec.api_key } : {}),
      ...(spec.headers ? { headers: spec.headers } : {}),
    };
    (routes[spec.route ?? 'chat'] ??= { tiers: [] }).tiers.push({ name: spec.name, provider: `p_${spec.name}`, model: spec.model });
  }
  return stringify({ version: 1, providers, routes });
}

function tierOf(spec: TierSpec): Tier {
  const config = loadConfigText(tierFile([spec]), '/test/llm-route.yaml', {});
  return config.routes.get(spec.route ?? 'chat')!.tiers[0];
}

// ─── checkTier ──────────────────────────────────────────────────────────────

describe('checkTier', () => {
  it('a healthy mock: reachable, model listed, a measured TTFT', async () => {
    const url = await healthyMock('m');
    const check = await checkTier(tierOf({ name: 'local', url, model: 'm' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, status: 'healthy' });
    expect(check.error).toBeUndefined();
    expect(check.ttftMs).toBeTypeOf('number');
    expect(check.ttftMs).toBeGreaterThanOrEqual(0);
    expect(check.durationMs).toBeGreaterThanOrEqual(check.ttftMs!);
  });

  it('without ttft: no chat request, ttftMs null', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, { object: 'list', data: [{ id: 'm' }] }));
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: false });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, ttftMs: null, status: 'healthy' });
    expect(fake.requests).toHaveLength(1);
  });

  it('a model missing from the list, which the server refuses: unhealthy, says what the list has and what the server said', async () => {
    const fake = await h.fake();
    // vLLM: only the model it was started with.
    fake.always((ctx) =>
      ctx.req.method === 'GET'
        ? ctx.json(200, { object: 'list', data: [{ id: 'm', object: 'model' }] })
        : ctx.json(404, { error: { message: `The model \`${String(ctx.body.model)}\` does not exist.`, type: 'NotFoundError', param: null, code: 404 } }),
    );
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'other' }), { timeoutMs: 5000, ttft: false });
    expect(check).toMatchObject({ reachable: true, modelPresent: false, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toContain('"other"');
    expect(check.error).toContain('it has: m');
    expect(check.error).toContain('HTTP 404: The model `other` does not exist.');
    expect(check.note).toBeUndefined();
  });

  it('llama.cpp lists one name (its alias) and serves any: a 1-token request decides, healthy with a note', async () => {
    const llama = await FakeLlamaServer.start();
    h.defer(() => llama.close());
    // Even without a TTFT check: the missing name is what the 1-token request decides.
    const check = await checkTier(tierOf({ name: 'local', url: llama.url, model: 'qwen2.5-7b-instruct' }), { timeoutMs: 5000, ttft: false });
    expect(check).toMatchObject({ reachable: true, modelPresent: false, status: 'healthy' });
    expect(check.error).toBeUndefined();
    expect(check.ttftMs).toBeTypeOf('number');
    expect(check.note).toBe(
      'model "qwen2.5-7b-instruct" is not in the provider\'s model list (it has: tiny), yet it answered a request for it: the server serves any model name',
    );
    expect(llama.requests.find((r) => r.body.max_tokens === 1)?.body).toMatchObject({ model: 'qwen2.5-7b-instruct', max_tokens: 1 });
  });

  it('a server still loading (llama.cpp 503 Loading model): loading, not unhealthy, no chat request', async () => {
    const llama = await FakeLlamaServer.start({ loading: true });
    h.defer(() => llama.close());
    const check = await checkTier(tierOf({ name: 'local', url: llama.url, model: 'tiny' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: null, ttftMs: null, status: 'loading', error: 'still loading (HTTP 503: Loading model)' });
    expect(llama.requests.filter((r) => r.body.max_tokens === 1)).toHaveLength(0);
  });

  it('a refused port: unreachable, at once', async () => {
    const started = performance.now();
    const check = await checkTier(tierOf({ name: 'cloud', url: REFUSED_URL, model: 'x' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: false, modelPresent: null, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toMatch(/connection refused/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('a server that never answers: gives up at the timeout', async () => {
    const url = await silentServer();
    const started = performance.now();
    const check = await checkTier(tierOf({ name: 'local', url, model: 'x' }), { timeoutMs: 300, ttft: true });
    const took = performance.now() - started;
    expect(check).toMatchObject({ reachable: false, modelPresent: null, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toMatch(/no answer within 300 ms/);
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);
  });

  it('a chat request that never starts: times out on the TTFT step and aborts it', async () => {
    const fake = await h.fake();
    let chatClosed = false;
    fake.always(async (ctx) => {
      if (ctx.req.method === 'GET') return ctx.json(200, { data: [{ id: 'm' }] });
      await ctx.closed;
      chatClosed = true;
    });
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 400, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toMatch(/no answer within 400 ms \(waiting for the first token\)/);
    await waitFor(() => chatClosed, 3000, 'the abandoned chat request to be closed');
  });

  it('a caller abort ends the check', async () => {
    const url = await silentServer();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const check = await checkTier(tierOf({ name: 'local', url, model: 'x' }), { timeoutMs: 10_000, ttft: true, signal: controller.signal });
    expect(check.status).toBe('unhealthy');
    expect(check.error).toMatch(/cancelled/);
    expect(check.durationMs).toBeLessThan(3000);
  });

  it('Ollama: reads /api/tags when /v1/models 404s; `llama3` matches `llama3:latest`', async () => {
    const url = await fakeOllama(['llama3:latest', 'qwen2.5:7b-instruct']);
    const check = await checkTier(tierOf({ name: 'local', url, model: 'llama3' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, status: 'healthy' });
    expect(check.ttftMs).toBeTypeOf('number');
  });

  it('Ollama: other tags do not match loosely', async () => {
    const url = await fakeOllama(['llama3:latest', 'qwen2.5:7b-instruct']);
    const check = await checkTier(tierOf({ name: 'local', url, model: 'qwen2.5:7b' }), { timeoutMs: 5000, ttft: false });
    expect(check).toMatchObject({ reachable: true, modelPresent: false, status: 'unhealthy' });
  });

  it('a server without any model list: presence unknown, not a failure', async () => {
    const fake = await h.fake();
    fake.always((ctx) => (ctx.req.method === 'GET' ? ctx.error(404, 'not found') : healthyStream(['hi'])(ctx)));
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: null, status: 'healthy' });
    expect(check.ttftMs).toBeTypeOf('number');
  });

  it('a refused key: reachable, unhealthy, says so, never shows the key, sends no chat request', async () => {
    const key = 'sk-probe-secret-4242';
    const fake = await h.fake();
    fake.always((ctx) => ctx.error(401, `Incorrect API key provided: ${key}`));
    const check = await checkTier(tierOf({ name: 'cloud', url: fake.url, model: 'gpt', api_key: key, headers: { 'x-org': 'acme' } }), {
      timeoutMs: 5000,
      ttft: true,
    });
    expect(check).toMatchObject({ reachable: true, modelPresent: null, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toMatch(/rejected the API key: HTTP 401/);
    expect(check.error).not.toContain(key);
    expect(fake.requests.every((r) => r.headers.authorization === `Bearer ${key}` && r.headers['x-org'] === 'acme')).toBe(true);
    expect(fake.requests.some((r) => r.headers['content-type'] === 'application/json')).toBe(false);
  });

  it('a chat request refused with an HTTP error: unhealthy with the upstream message; a 503 that says loading: loading', async () => {
    const fake = await h.fake();
    let message = 'the server is overloaded';
    fake.always((ctx) => (ctx.req.method === 'GET' ? ctx.json(200, { data: [{ id: 'm' }] }) : ctx.error(503, message)));
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, ttftMs: null, status: 'unhealthy' });
    expect(check.error).toContain('HTTP 503: the server is overloaded');
    message = 'model is loading, try later';
    expect(await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: true })).toMatchObject({
      status: 'loading',
      error: 'still loading (HTTP 503: model is loading, try later)',
    });
    const chat = fake.requests.find((r) => r.body.max_tokens === 1);
    expect(chat?.body).toMatchObject({ model: 'm', stream: true, max_tokens: 1 });
  });

  it('retries with max_completion_tokens when the model refuses max_tokens (OpenAI reasoning models)', async () => {
    const fake = await h.fake();
    fake.always((ctx) => {
      if (ctx.req.method === 'GET') return ctx.json(200, { data: [{ id: 'o1' }] });
      if ('max_tokens' in ctx.body)
        return ctx.error(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.");
      return healthyStream(['p'])(ctx);
    });
    const check = await checkTier(tierOf({ name: 'cloud', url: fake.url, model: 'o1' }), { timeoutMs: 5000, ttft: true });
    expect(check.status, check.error).toBe('healthy');
    expect(fake.requests.at(-1)?.body).toMatchObject({ max_completion_tokens: 1, stream: true });
  });

  it('TTFT is the first content event, not the role chunk before it', async () => {
    const fake = await h.fake();
    fake.always(async (ctx) => {
      if (ctx.req.method === 'GET') return ctx.json(200, { data: [{ id: 'm' }] });
      ctx.startStream();
      ctx.role();
      await ctx.wait(200);
      ctx.content('p');
      ctx.finish();
      ctx.done();
    });
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: true });
    expect(check.status).toBe('healthy');
    expect(check.ttftMs).toBeGreaterThanOrEqual(180);
  });

  it('a stream that ends before any token: unhealthy', async () => {
    const fake = await h.fake();
    fake.always((ctx) => {
      if (ctx.req.method === 'GET') return ctx.json(200, { data: [{ id: 'm' }] });
      ctx.startStream();
      ctx.role();
      ctx.done();
    });
    const check = await checkTier(tierOf({ name: 'local', url: fake.url, model: 'm' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ status: 'unhealthy', ttftMs: null });
    expect(check.error).toMatch(/ended before its first token/);
  });
});

// ─── the real CLI ───────────────────────────────────────────────────────────

interface ProbeJson {
  ok: boolean;
  routes: Record<
    string,
    Array<{
      tier: string;
      provider: string;
      model: string;
      reachable: boolean;
      model_present: boolean | null;
      ttft_ms: number | null;
      state: string;
      error?: string;
    }>
  >;
}

describe('the real CLI: llm-route probe', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  let fileCount = 0;
  beforeAll(() => {
    cli = buildPrivateCli();
  }, 60_000);
  afterAll(() => cli?.remove());

  async function probe(yamlText: string, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
    const file = join(cli.dir, `probe-${++fileCount}.yaml`);
    writeFileSync(file, yamlText);
    const started = performance.now();
    // Spawned, not spawnSync: the servers it probes live in this process and must keep answering.
    const proc = runCli(cli.bin, ['probe', '-c', file, ...args], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    });
    const { code } = await proc.exited;
    return { code, stdout: proc.lines.join('\n'), stderr: proc.stderr(), ms: performance.now() - started };
  }

  it('exits 0 with one JSON document when every tier is healthy', async () => {
    const mock = await healthyMock('m');
    const ollama = await fakeOllama(['llama3:latest']);
    const run = await probe(
      tierFile([
        { name: 'local', url: ollama, model: 'llama3' },
        { name: 'cloud', url: mock, model: 'm' },
        { name: 'only', url: mock, model: 'm', route: 'code' },
      ]),
      ['--json'],
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as ProbeJson;
    expect(report.ok).toBe(true);
    expect(Object.keys(report.routes)).toEqual(['chat', 'code']);
    expect(report.routes.chat.map((t) => t.tier)).toEqual(['local', 'cloud']);
    expect(report.routes.chat[0]).toMatchObject({ provider: 'p_local', model: 'llama3', reachable: true, model_present: true, state: 'healthy' });
    expect(report.routes.chat[0].ttft_ms).toBeTypeOf('number');
    expect(report.routes.chat[0]).not.toHaveProperty('error');
    expect(report.routes.code[0]).toMatchObject({ tier: 'only', state: 'healthy' });
  }, 30_000);

  it('--json shows what discovery learned: context, context_source, vision, tools (null when unknown)', async () => {
    const llama = await h.fake();
    llama.always(openaiServer({ '/v1/models': { object: 'list', data: [{ id: 'tiny', object: 'model' }] }, '/props': llamaProps(1024) }));
    const mock = await healthyMock('m');
    const run = await probe(
      tierFile([
        { name: 'local', url: llama.url, model: 'tiny' },
        { name: 'cloud', url: mock, model: 'm' },
      ]),
      ['--json'],
    );
    const report = JSON.parse(run.stdout) as { routes: { chat: Array<Record<string, unknown>> } };
    expect(report.routes.chat[0]).toMatchObject({ tier: 'local', context: 1024, context_source: 'llama.cpp /props', vision: false, tools: null });
    expect(report.routes.chat[1]).toMatchObject({ tier: 'cloud', context: null, context_source: null, vision: null, tools: null });
    expect(llama.requests.map((r) => r.url)).toContain('/props');
  });

  it('exits 1 when any tier is unhealthy, and a dead tier cannot make it hang', async () => {
    const mock = await healthyMock('m');
    const silent = await silentServer();
    const run = await probe(
      tierFile([
        { name: 'good', url: mock, model: 'm' },
        { name: 'missing', url: await fakeOllama(['m']), model: 'nope' },
        { name: 'refused', url: REFUSED_URL, model: 'x' },
        { name: 'silent', url: silent, model: 'x' },
      ]),
      ['--json', '--timeout', '500'],
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.ms).toBeLessThan(10_000);
    const report = JSON.parse(run.stdout) as ProbeJson;
    expect(report.ok).toBe(false);
    const [good, missing, refused, silentTier] = report.routes.chat;
    expect(good).toMatchObject({ tier: 'good', reachable: true, model_present: true, state: 'healthy' });
    expect(missing).toMatchObject({ tier: 'missing', reachable: true, model_present: false, state: 'unhealthy' });
    expect(refused).toMatchObject({ tier: 'refused', reachable: false, model_present: null, ttft_ms: null, state: 'unhealthy' });
    expect(refused.error).toMatch(/connection refused/);
    expect(silentTier).toMatchObject({ tier: 'silent', reachable: false, state: 'unhealthy' });
    expect(silentTier.error).toMatch(/no answer within 500 ms/);
  }, 30_000);

  it('--route limits the probe to one route', async () => {
    const mock = await healthyMock('m');
    const run = await probe(
      tierFile([
        { name: 'refused', url: REFUSED_URL, model: 'x' },
        { name: 'good', url: mock, model: 'm', route: 'code' },
      ]),
      ['--json', '--route', 'code'],
    );
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys((JSON.parse(run.stdout) as ProbeJson).routes)).toEqual(['code']);
  }, 30_000);

  it('prints a readable table without --json', async () => {
    const mock = await healthyMock('m');
    const run = await probe(
      tierFile([
        { name: 'good', url: mock, model: 'm' },
        { name: 'refused', url: REFUSED_URL, model: 'x' },
      ]),
    );
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^ROUTE\s+TIER\s+PROVIDER\/MODEL\s+REACHABLE\s+MODEL\s+TTFT\s+CONTEXT\s+STATE\s+ERROR\s+NOTE$/);
    expect(lines[1]).toMatch(/^chat\s+good\s+p_good\/m\s+✓\s+✓\s+\d+ ms\s+\?\s+healthy\s+-$/);
    expect(lines[2]).toMatch(/^chat\s+refused\s+p_refused\/x\s+✗\s+\?\s+-\s+\?\s+unhealthy\s+connection refused/);
    expect(run.stdout).toContain('1 of 2 tiers healthy');
  }, 30_000);

  it("a healthy tier's note goes in the NOTE column, its ERROR cell says -", async () => {
    const llama = await FakeLlamaServer.start();
    h.defer(() => llama.close());
    const run = await probe(tierFile([{ name: 'local', url: llama.url, model: 'qwen2.5-7b-instruct' }]));
    expect(run.code, run.stderr).toBe(0);
    const [header, row] = run.stdout.split('\n');
    const noteAt = header.indexOf('NOTE');
    expect(header.indexOf('ERROR')).toBeLessThan(noteAt);
    expect(row).toMatch(/\shealthy\s+-\s+model "qwen2\.5-7b-instruct" is not in the provider's model list/);
    expect(row.indexOf('model "qwen2.5')).toBe(noteAt);
    expect(row).not.toContain('note:');
  }, 30_000);

  it('exits 2 on a bad tier file, naming where', async () => {
    const run = await probe('version: 1\nproviders: {}\nroutes:\n  chat:\n    tiers:\n      - { provider: nowhere, model: m, colour: red }\n', ['--json']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/probe-\d+\.yaml:6:\d+: /);
  }, 30_000);

  it('exits 2 on an unknown --route, listing the routes', async () => {
    const run = await probe(tierFile([{ name: 'refused', url: REFUSED_URL, model: 'x' }]), ['--route', 'nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown route "nope"');
    expect(run.stderr).toContain('chat');
  }, 30_000);

  it('exits 2 on a bad --timeout', async () => {
    const run = await probe(tierFile([{ name: 'refused', url: REFUSED_URL, model: 'x' }]), ['--timeout', 'soon']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--timeout');
  }, 30_000);
});
