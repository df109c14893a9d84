import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { ProxyServer } from '../../../src/server/server.js';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, logLine, metric, openaiError, readAll, sleep, tryConnect, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml, DEAD_URL, type RunningProxy, sseData, sseText, startProxy } from '../../helpers/proxy.js';

const h = useHarness();

const fast = { connect_ms: 300, ttft_ms: 1000, idle_ms: 1000, total_ms: 3000 };
const messages = [{ role: 'user' as const, content: 'hi' }];

function sdk(p: RunningProxy, apiKey = 'x'): OpenAI {
  return new OpenAI({ baseURL: p.baseURL, apiKey, maxRetries: 0 });
}

describe('GET /v1/models', () => {
  it('lists the route names in the OpenAI list shape', async () => {
    const local = await h.fake();
    const yaml = [
      'version: 1',
      'server: { port: 0 }',
      'providers:',
      `  fake: { type: openai, base_url: "${local.url}" }`,
      'routes:',
      '  chat: { tiers: [{ provider: fake, model: m1 }] }',
      '  code: { tiers: [{ provider: fake, model: m2 }] }',
      '',
    ].join('\n');
    const p = await h.proxy(yaml);
    const res = await fetch(`${p.origin}/v1/models`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { object: string; data: Array<{ id: string; object: string; created: number; owned_by: string }> };
    expect(body.object).toBe('list');
    expect(body.data.map((m) => m.id).sort()).toEqual(['chat', 'code']);
    for (const m of body.data) {
      expect(m.object).toBe('model');
      expect(Number.isInteger(m.created)).toBe(true);
      expect(typeof m.owned_by).toBe('string');
    }
    const ids: string[] = [];
    for await (const m of sdk(p).models.list()) ids.push(m.id);
    expect(ids.sort()).toEqual(['chat', 'code']);
    expect(local.requests).toHaveLength(0); // answered by llm-route itself
  });
});

describe('GET /healthz', () => {
  it('answers 200 with the state of every tier', async () => {
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('ok')));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: DEAD_URL, timeouts: fast },
        { name: 'cloud', url: cloud.url, model: 'gpt-4o-mini' },
      ],
    });

    const before = await fetch(`${p.origin}/healthz`);
    expect(before.status).toBe(200);
    const b = (await before.json()) as { routes: Record<string, { tiers: Array<Record<string, unknown>> }> };
    expect(b.routes.chat.tiers.map((t) => t.name)).toEqual(['local', 'cloud']);
    for (const t of b.routes.chat.tiers) expect(typeof t.state).toBe('string');

    const r = await chat(p, {});
    expect(r.status).toBe(200);
    await r.arrayBuffer();

    const after = (await (await fetch(`${p.origin}/healthz`)).json()) as { routes: Record<string, { tiers: Array<Record<string, unknown>> }> };
    const [local, cl] = after.routes.chat.tiers;
    expect(local.name).toBe('local');
    expect(local.state).not.toBe('healthy'); // its connection was refused
    expect(cl.state).toBe('healthy');
    expect(cl.model).toBe('gpt-4o-mini');
  });
});

describe('secrets never leak', () => {
  it('an api_key from ${MY_KEY} is sent upstream but appears in no /healthz, /metrics, log line or error body', async () => {
    const SECRET = 'sk-secret-123';
    const local = await h.fake();
    // 1st request: 503 twice then the dead cloud tier → 502. Then a unary answer and a stream.
    local.next(
      (c) => c.error(503, 'busy'),
      (c) => c.error(503, 'busy'),
      (c) => c.json(200, completion('fine')),
      healthyStream(['a', 'b']),
    );
    const p = await h.proxy(
      {
        tiers: [
          { name: 'local', url: local.url, api_key: '${MY_KEY}', timeouts: fast, retry: { attempts: 2, base_ms: 5, max_ms: 20 } },
          { name: 'cloud', url: DEAD_URL, api_key: '${MY_KEY}', timeouts: fast },
        ],
      },
      { env: { MY_KEY: SECRET } },
    );

    const failed = await chat(p, {});
    expect(failed.status).toBe(502);
    const failedBody = await failed.text();
    openaiError(JSON.parse(failedBody));
    const ok = await chat(p, {});
    expect(ok.status).toBe(200);
    const okBody = await ok.text();
    const streamed = await chat(p, { stream: true });
    expect(streamed.status).toBe(200);
    const streamBody = await streamed.text();
    expect(sseText(streamBody)).toBe('ab');

    // The key was really used.
    expect(local.requests.map((r) => r.headers.authorization)).toEqual(Array(4).fill(`Bearer ${SECRET}`));

    const healthz = await (await fetch(`${p.origin}/healthz`)).text();
    const { text: metricsText } = await fetchMetrics(p);
    await waitFor(() => p.logs.length >= 3);
    const everything = [
      failedBody,
      okBody,
      streamBody,
      healthz,
      metricsText,
      JSON.stringify(p.logs),
      JSON.stringify([...failed.headers, ...ok.headers, ...streamed.headers]),
    ];
    for (const text of everything) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain('secret-123');
    }
  });
});

describe('GET /metrics', () => {
  it('has every metric docs/operations.md lists, labelled by route and tier, after a few requests', async () => {
    const cloud = await h.fake();
    // A stream with one malformed event after the first token; then a slow stream; then unary.
    cloud
      .next(
        async (ctx) => {
          ctx.startStream();
          ctx.role();
          ctx.content('x');
          ctx.event('{"not json');
          ctx.content('y');
          ctx.finish();
          ctx.usage(4, 2);
          ctx.done();
        },
        healthyStream(['s', 'l', 'o', 'w'], { delayMs: 120 }),
      )
      .always((ctx) => ctx.json(200, completion('u', { prompt_tokens: 3, completion_tokens: 1 })));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: DEAD_URL, timeouts: fast },
        { name: 'cloud', url: cloud.url, timeouts: fast },
      ],
    });

    const s1 = await chat(p, { stream: true });
    expect(sseText(await s1.text())).toBe('xy');

    // While a stream is open, llm_active_streams is 1.
    const s2 = await chat(p, { stream: true });
    expect(s2.status).toBe(200);
    const during = await fetchMetrics(p);
    expect(metric(during.samples, 'llm_active_streams', { route: 'chat', tier: 'cloud' })).toBe(1);
    expect(sseText(await s2.text())).toBe('slow');

    const u = await chat(p, {});
    expect(u.status).toBe(200);
    await u.arrayBuffer();

    const res = await fetch(`${p.origin}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const { samples, text } = await fetchMetrics(p);
    for (const name of [
      'llm_time_to_first_token_seconds',
      'llm_streaming_chunk_errors_total',
      'llm_requests_total',
      'llm_failovers_total',
      'llm_upstream_attempts_total',
      'llm_active_streams',
      'llm_tokens_total',
    ]) {
      expect(text, name).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('# TYPE llm_time_to_first_token_seconds histogram');
    const labels = { route: 'chat', tier: 'cloud' };
    expect(metric(samples, 'llm_time_to_first_token_seconds_count', labels)).toBe(2);
    expect(metric(samples, 'llm_time_to_first_token_seconds_bucket', { ...labels, le: '0.05' })).toBeDefined();
    expect(metric(samples, 'llm_time_to_first_token_seconds_bucket', { ...labels, le: '10' })).toBe(2);
    expect(metric(samples, 'llm_streaming_chunk_errors_total', labels)).toBe(1);
    expect(metric(samples, 'llm_requests_total', { ...labels, outcome: 'ok' })).toBe(3);
    expect(metric(samples, 'llm_failovers_total', { route: 'chat', from_tier: 'local', reason: 'connection_refused' })).toBe(3);
    expect(metric(samples, 'llm_upstream_attempts_total', { route: 'chat', tier: 'local', result: 'connection_refused' })).toBe(3);
    expect(metric(samples, 'llm_upstream_attempts_total', { route: 'chat', tier: 'cloud', result: 'ok' })).toBe(3);
    expect(metric(samples, 'llm_active_streams', labels)).toBe(0);
    expect(metric(samples, 'llm_tokens_total', { ...labels, kind: 'prompt' })).toBe(4 + 7 + 3);
    expect(metric(samples, 'llm_tokens_total', { ...labels, kind: 'completion' })).toBe(2 + 4 + 1);
  });

  it('counts a request no tier answered under tier="none"', async () => {
    const p = await h.proxy({ tiers: [{ name: 'local', url: DEAD_URL, timeouts: fast }] });
    const res = await chat(p, {});
    expect(res.status).toBe(502);
    await res.arrayBuffer();
    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_requests_total', { route: 'chat', tier: 'none', outcome: 'failed' })).toBe(1);
  });
});

describe('metrics cardinality', () => {
  it('model names of unknown routes do not become metric label values', async () => {
    const p = await h.proxy({ tiers: [{ name: 'local', url: DEAD_URL }] });
    for (let i = 0; i < 25; i++) {
      const res = await chat(p, { model: `bogus-model-${i}` });
      expect(res.status).toBe(404);
      await res.arrayBuffer();
    }
    const { text, samples } = await fetchMetrics(p);
    // Clients choose `model`; every distinct unknown name would be a new time series (unbounded memory).
    expect(text).not.toContain('bogus-model-');
    expect(samples.filter((s) => s.labels.route !== undefined && s.labels.route !== 'chat')).toHaveLength(0);
  });
});

describe('the request log', () => {
  it('has route, tier, attempts with outcomes, ttft_ms (streams), duration_ms and status', async () => {
    const cloud = await h.fake();
    cloud.next(healthyStream(['one', ' two'], { delayMs: 30 })).always((ctx) => ctx.json(200, completion('u')));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: DEAD_URL, timeouts: fast },
        { name: 'cloud', url: cloud.url, timeouts: fast },
      ],
    });

    const s = await chat(p, { stream: true });
    expect(await s.text()).toContain('[DONE]');
    const line = await logLine(p, s.headers.get('x-request-id'));
    expect(line.event).toBe('request');
    expect(typeof line.time).toBe('string');
    expect(Number.isNaN(Date.parse(line.time as string))).toBe(false);
    expect(line.route).toBe('chat');
    expect(line.tier).toBe('cloud');
    expect(line.status).toBe(200);
    expect(line.stream).toBe(true);
    const attempts = line.attempts as Array<Record<string, unknown>>;
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ tier: 'local', attempt: 1, outcome: 'connection_refused' });
    expect(attempts[1]).toMatchObject({ tier: 'cloud', attempt: 1, outcome: 'ok' });
    for (const a of attempts) expect(typeof a.ms).toBe('number');
    expect(typeof line.ttft_ms).toBe('number');
    expect(typeof line.duration_ms).toBe('number');
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(line.ttft_ms as number);
    expect(line.duration_ms as number).toBeGreaterThanOrEqual(25); // the second word came 30 ms after the first
    expect(Math.abs((line.ttft_ms as number) - Number(s.headers.get('x-llm-route-ttft-ms')))).toBeLessThanOrEqual(1);
    expect(line.usage).toEqual({ prompt_tokens: 7, completion_tokens: 2 });

    const u = await chat(p, {});
    await u.arrayBuffer();
    const ul = await logLine(p, u.headers.get('x-request-id'));
    expect(ul).toMatchObject({ route: 'chat', tier: 'cloud', status: 200, stream: false, ttft_ms: null });
    expect(typeof ul.duration_ms).toBe('number');

    const bad = await chat(p, { model: 'nope' });
    expect(bad.status).toBe(404);
    const bl = await logLine(p, bad.headers.get('x-request-id'));
    expect(bl.status).toBe(404);
    expect(bl.tier).toBeNull();
  });
});

describe('server.auth_token', () => {
  it('rejects a missing or wrong bearer token with 401, accepts the right one, and never forwards it', async () => {
    const local = await h.fake();
    local.always((ctx) => (ctx.body.stream ? healthyStream(['tok'])(ctx) : ctx.json(200, completion('authorized'))));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }], server: { auth_token: 'tok-abc-123' } });

    const none = await chat(p, {});
    expect(none.status).toBe(401);
    expect(openaiError(await none.json()).message).toBeTruthy();
    expect(none.headers.get('x-request-id')).toBeTruthy();

    for (const header of ['Bearer wrong', 'Bearer tok-abc-12', 'Bearer tok-abc-1234', 'tok-abc-123', 'Basic dG9rLWFiYy0xMjM=', 'bearer']) {
      const res = await chat(p, {}, { headers: { authorization: header } });
      expect(res.status, header).toBe(401);
      openaiError(await res.json());
    }
    const models = await fetch(`${p.origin}/v1/models`);
    expect(models.status).toBe(401);
    await models.arrayBuffer();
    expect(local.requests).toHaveLength(0);

    const good = await chat(p, {}, { headers: { authorization: 'Bearer tok-abc-123' } });
    expect(good.status).toBe(200);
    await good.arrayBuffer();

    const client = sdk(p, 'tok-abc-123');
    const out = await client.chat.completions.create({ model: 'chat', messages });
    expect(out.choices[0].message.content).toBe('authorized');
    const stream = await client.chat.completions.create({ model: 'chat', messages, stream: true });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    expect(text).toBe('tok');
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['chat']);

    const wrong = await sdk(p, 'nope')
      .chat.completions.create({ model: 'chat', messages })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(APIError);
    expect((wrong as APIError).status).toBe(401);

    expect(local.requests).toHaveLength(3);
    for (const r of local.requests) expect(JSON.stringify(r.headers)).not.toContain('tok-abc-123');
  });

  it('refuses to construct a server on 0.0.0.0 without auth_token, with a clear error', () => {
    const open = loadConfigText(configYaml({ tiers: [{ name: 'local', url: DEAD_URL }], server: { host: '0.0.0.0' } }), '/test/a.yaml', {});
    expect(() => new ProxyServer({ config: open })).toThrow(/auth_token/);
    const loopback = loadConfigText(configYaml({ tiers: [{ name: 'local', url: DEAD_URL }] }), '/test/b.yaml', {});
    // The CLI's --host override is checked the same way.
    expect(() => new ProxyServer({ config: loopback, host: '0.0.0.0' })).toThrow(/auth_token/);
    expect(() => new ProxyServer({ config: loopback, host: '::' })).toThrow(/auth_token/);
    expect(() => new ProxyServer({ config: loopback, host: '192.168.1.10' })).toThrow(/auth_token/);
  });

  it('allows 0.0.0.0 with auth_token, and loopback without one', async () => {
    const guarded = loadConfigText(configYaml({ tiers: [{ name: 'local', url: DEAD_URL }], server: { host: '0.0.0.0', auth_token: 't' } }), '/test/c.yaml', {});
    const a = new ProxyServer({ config: guarded });
    const loopback = loadConfigText(configYaml({ tiers: [{ name: 'local', url: DEAD_URL }] }), '/test/d.yaml', {});
    const b = new ProxyServer({ config: loopback, host: 'localhost' });
    const c = new ProxyServer({ config: loopback, host: '127.0.0.1' });
    const d = new ProxyServer({ config: loopback, host: '::1' });
    for (const s of [a, b, c, d]) await s.app.pools.close();
  });
});

describe('graceful shutdown', () => {
  it('lets an open stream finish within the grace period while new connections are refused', async () => {
    const local = await h.fake();
    local.always(healthyStream(['w1', ' w2', ' w3', ' w4', ' w5', ' w6'], { delayMs: 100 }));
    const p = await startProxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast }] });
    h.defer(() => p.server.close(0));
    const port = Number(new URL(p.origin).port);

    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    const reading = readAll(res);
    await sleep(50);
    let closedAt = 0;
    const closing = p.server.close(3000).then(() => (closedAt = performance.now()));
    await sleep(30);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    const { text, error } = await reading;
    const streamEndedAt = performance.now();
    expect(error).toBeNull();
    expect(sseText(text)).toBe('w1 w2 w3 w4 w5 w6');
    expect(sseData(text).at(-1)).toBe('[DONE]');
    await closing;
    expect(closedAt).toBeGreaterThanOrEqual(streamEndedAt - 50);
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect(line.outcome).toBe('ok');
  });

  it('cuts a stream that outlasts the grace period, and closes its upstream', async () => {
    const local = await h.fake();
    local.always(
      healthyStream(
        Array.from({ length: 40 }, (_, i) => ` w${i}`),
        { delayMs: 100 },
      ),
    );
    const p = await startProxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast }] });
    h.defer(() => p.server.close(0));

    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    const reading = readAll(res);
    await sleep(50);
    const started = performance.now();
    await p.server.close(300);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1500);

    const { text } = await reading;
    expect(text).not.toContain('[DONE]');
    expect(text).toContain('w0');
    expect(text).not.toContain('w39');
    await waitFor(() => local.socketClosedAt.has(local.requests[0].socketId), 2000, 'the upstream socket to close');
  });

  it('a stream cut at shutdown ends with a stream_interrupted SSE event and is not logged as a client abort', async () => {
    const local = await h.fake();
    local.always(
      healthyStream(
        Array.from({ length: 40 }, (_, i) => ` w${i}`),
        { delayMs: 100 },
      ),
    );
    const p = await startProxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast }] });
    h.defer(() => p.server.close(0));
    const res = await chat(p, { stream: true });
    const reading = readAll(res);
    await sleep(50);
    await p.server.close(300);
    const { text } = await reading;
    // docs/routing.md, "After commit": a mid-stream failure is one SSE event data: {"error":{...,"code":"stream_interrupted"}}.
    const last = sseData(text).at(-1) ?? '';
    expect(last).toContain('"stream_interrupted"');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect(line.outcome).not.toBe('client_abort'); // the server went away, not the client
  });

  it('during the drain, a keep-alive client gets connection: close instead of new work on the old connection', async () => {
    const local = await h.fake();
    local.next(healthyStream(['a', 'b', 'c'], { delayMs: 80 })).always((ctx) => ctx.json(200, completion('late')));
    const p = await startProxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast }] });
    h.defer(() => p.server.close(0));
    const agent = new Agent({ connections: 1 });
    h.defer(() => agent.close());
    const url = `${p.origin}/v1/chat/completions`;
    const send = (stream: boolean) =>
      undiciFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages, stream }),
        dispatcher: agent,
      });
    const a = await send(true);
    expect(a.status).toBe(200);
    const closing = p.server.close(3000);
    expect(sseText(await a.text())).toBe('abc');
    // A request sent right after, on the same (reused) connection: either refused, or answered with connection: close.
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      try {
        const b = await send(false);
        await b.arrayBuffer();
        outcomes.push(`answered, connection: ${b.headers.get('connection')}`);
      } catch (err) {
        outcomes.push(`failed: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`);
      }
    }
    await closing;
    for (const o of outcomes.filter((x) => x.startsWith('answered'))) expect(o).toBe('answered, connection: close');
    expect(outcomes.filter((x) => x.startsWith('answered')).length, outcomes.join('; ')).toBeLessThanOrEqual(1);
  });

  it('closes at once when nothing is in flight', async () => {
    const p = await startProxy({ tiers: [{ name: 'local', url: DEAD_URL }] });
    h.defer(() => p.server.close(0));
    // An idle keep-alive connection must not hold the close up.
    await (await fetch(`${p.origin}/healthz`)).arrayBuffer();
    const started = performance.now();
    await p.server.close(5000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('the real CLI: llm-route serve --no-ui', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  }, 60_000);
  afterAll(() => cli?.remove());

  it('on SIGTERM with an open stream, lets it finish, exits 0, and logs JSON lines', async () => {
    const local = await h.fake();
    local.always(healthyStream(['a1', ' a2', ' a3', ' a4', ' a5', ' a6', ' a7', ' a8'], { delayMs: 100 }));
    const file = join(cli.dir, 'llm-route.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: local.url, api_key: '${CLI_TEST_KEY}', timeouts: fast }] }));

    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { CLI_TEST_KEY: 'sk-cli-secret-999', LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    });
    const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { event: string; url: string };
    expect(listening.event).toBe('listening');
    const baseURL = listening.url;
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const port = Number(new URL(baseURL).port);

    // A request line appears for a quick request.
    const quick = await fetch(`${baseURL}/models`);
    expect(quick.status).toBe(200);
    await quick.arrayBuffer();

    const res = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages, stream: true }),
    });
    expect(res.status).toBe(200);
    const reading = readAll(res);
    await sleep(150);
    proc.child.kill('SIGTERM');
    await sleep(50);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    const { text, error } = await reading;
    expect(error).toBeNull();
    expect(sseText(text)).toBe('a1 a2 a3 a4 a5 a6 a7 a8');
    expect(sseData(text).at(-1)).toBe('[DONE]');

    const exit = await Promise.race([proc.exited, sleep(8000).then(() => null)]);
    expect(exit, `did not exit; stderr: ${proc.stderr()}`).not.toBeNull();
    expect(exit).toEqual({ code: 0, signal: null });

    const lines = proc.lines.filter((l) => l.trim() !== '');
    const parsed = lines.map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`stdout line is not JSON: ${l}`);
      }
    });
    expect(parsed[0].event).toBe('listening');
    const requestLines = parsed.filter((l) => l.event === 'request');
    const streamLine = requestLines.find((l) => l.stream === true);
    expect(streamLine).toMatchObject({ route: 'chat', tier: 'local', status: 200, outcome: 'ok' });
    expect(typeof streamLine!.ttft_ms).toBe('number');
    expect(typeof streamLine!.duration_ms).toBe('number');
    const events = parsed.map((l) => l.event);
    expect(events.indexOf('request')).toBeGreaterThan(0);
    expect(events).toContain('shutdown');
    expect(events.at(-1)).toBe('stopped');
    expect(events.indexOf('shutdown')).toBeLessThan(events.lastIndexOf('request'));
    expect(proc.lines.join('\n') + proc.stderr()).not.toContain('sk-cli-secret-999');
    expect(local.requests[0].headers.authorization).toBe('Bearer sk-cli-secret-999');
  }, 30_000);

  it('on SIGINT with nothing in flight, exits 0 promptly', async () => {
    const file = join(cli.dir, 'idle.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: DEAD_URL }] }));
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    });
    const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
    const health = await fetch(`${listening.url.replace(/\/v1$/, '')}/healthz`);
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    const sentAt = performance.now();
    proc.child.kill('SIGINT');
    const exit = await Promise.race([proc.exited, sleep(5000).then(() => null)]);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(performance.now() - sentAt).toBeLessThan(2000);
  }, 20_000);
});
