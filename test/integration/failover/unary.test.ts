import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, logLine, metric, openaiError, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, DEAD_URL, type RunningProxy } from '../../helpers/proxy.js';
import { readAttempts, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();

function sdk(p: RunningProxy, apiKey = 'x'): OpenAI {
  return new OpenAI({ baseURL: p.baseURL, apiKey, maxRetries: 0 });
}

const fast = { connect_ms: 300, ttft_ms: 1000, idle_ms: 1000, total_ms: 2000 };
const oneTry = { attempts: 1 };
const quickRetry = { attempts: 2, base_ms: 5, max_ms: 20 };

/** A script that answers a whole completion. */
const answer =
  (text: string, usage?: { prompt_tokens: number; completion_tokens: number }): Script =>
  (ctx) =>
    ctx.json(200, completion(text, usage));

/** Headers, then the first half of a JSON body; `then` decides what happens next. */
function halfBody(then: 'destroy' | 'stall' | 'trickle', full = JSON.stringify(completion('never complete'))): Script {
  return async (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'application/json' });
    ctx.res.write(full.slice(0, Math.floor(full.length / 2)));
    if (then === 'destroy') {
      await ctx.wait(30);
      ctx.destroy();
    } else if (then === 'stall') {
      await ctx.closed;
    } else {
      // JSON whitespace every 40 ms: bytes keep coming, the body never ends.
      while (!ctx.isClosed()) {
        ctx.res.write(' ');
        await ctx.wait(40);
      }
    }
  };
}

describe('unary: healthy answer', () => {
  it('passes the upstream body through byte for byte, with the routing headers', async () => {
    const local = await h.fake();
    // Pretty-printed, non-ASCII, trailing newline: any re-serialisation would change the bytes.
    const bytes = Buffer.from(
      `${JSON.stringify({ ...completion('héllo ✓ "quoted"'), system_fingerprint: 'fp_1', extra_field: [1, 2.5, null] }, null, 2)}\n`,
      'utf8',
    );
    local.always((ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(bytes.length) });
      ctx.res.end(bytes);
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(bytes)).toBe(true);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toMatch(/^[\w.:-]+$/);
    expect(res.headers.get('x-llm-route-route')).toBe('chat');
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
    expect(res.headers.get('x-llm-route-ttft-ms')).toBeNull();
    expect(local.requests).toHaveLength(1);
    expect(local.requests[0].body.model).toBe('local-model');
  });

  it('works with stream: false and with the OpenAI SDK', async () => {
    const local = await h.fake();
    local.always(answer('sdk answer'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const raw = await chat(p, { stream: false });
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('sdk answer');

    const { data, response } = await sdk(p)
      .chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('sdk answer');
    expect(data.usage?.total_tokens).toBe(8);
    expect(response.headers.get('x-llm-route-tier')).toBe('local');
    expect(response.headers.get('x-llm-route-attempts')).toBe('1');
    expect(response.headers.get('x-llm-route-ttft-ms')).toBeNull();
    expect(local.requests[1].body.stream).toBeUndefined();
    expect(local.requests[1].body.stream_options).toBeUndefined();
  });

  it('echoes a sane client x-request-id and logs it', async () => {
    const local = await h.fake();
    local.always(answer('ok'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await chat(p, {}, { headers: { 'x-request-id': 'client-id-42' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('client-id-42');
    const line = await logLine(p, 'client-id-42');
    expect(line.route).toBe('chat');
    expect(line.tier).toBe('local');
    expect(line.status).toBe(200);
    expect(line.stream).toBe(false);
    expect(line.ttft_ms).toBeNull();
  });
});

describe('unary: failover before the answer', () => {
  const cases: Array<{ name: string; script?: Script; outcome: string; localRequests: number }> = [
    { name: 'connection refused', outcome: 'connection_refused', localRequests: 0 },
    { name: '503 (retried, then failed over)', script: (c) => c.error(503, 'overloaded'), outcome: 'server_error', localRequests: 2 },
    { name: '500', script: (c) => c.error(500, 'boom'), outcome: 'server_error', localRequests: 2 },
    { name: '429', script: (c) => c.error(429, 'slow down'), outcome: 'rate_limited', localRequests: 2 },
    { name: '401 bad key', script: (c) => c.error(401, 'Incorrect API key provided', { code: 'invalid_api_key' }), outcome: 'auth', localRequests: 1 },
    { name: '403', script: (c) => c.error(403, 'forbidden'), outcome: 'auth', localRequests: 1 },
    {
      name: '404 model not pulled',
      script: (c) => c.error(404, 'model "local-model" not found, try pulling it first'),
      outcome: 'model_not_found',
      localRequests: 1,
    },
    {
      name: '400 context length',
      script: (c) =>
        c.error(400, "This model's maximum context length is 4096 tokens. However, your messages resulted in 9000 tokens.", {
          code: 'context_length_exceeded',
          type: 'invalid_request_error',
        }),
      outcome: 'context_length',
      localRequests: 1,
    },
    { name: '413 prompt too long', script: (c) => c.error(413, 'prompt is too long for this model'), outcome: 'context_length', localRequests: 1 },
    { name: '405 wrong base URL', script: (c) => c.error(405, 'method not allowed'), outcome: 'client_error', localRequests: 1 },
  ];

  for (const c of cases) {
    it(`fails over on ${c.name}`, async () => {
      const local = await h.fake();
      const cloud = await h.fake();
      if (c.script) local.always(c.script);
      cloud.always(answer('from cloud'));
      const p = await h.proxy({
        tiers: [
          { name: 'local', url: c.script ? local.url : DEAD_URL, timeouts: fast, retry: quickRetry },
          { name: 'cloud', url: cloud.url, timeouts: fast },
        ],
      });
      const res = await chat(p, {});
      expect(res.status).toBe(200);
      const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0].message.content).toBe('from cloud');
      expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
      expect(res.headers.get('x-llm-route-attempts')).toBe(String(c.localRequests === 2 ? 3 : 2));
      expect(local.requests).toHaveLength(c.localRequests);
      expect(cloud.requests).toHaveLength(1);
      expect(cloud.requests[0].body.model).toBe('cloud-model');

      const line = await logLine(p, res.headers.get('x-request-id'));
      const attempts = line.attempts as Array<{ tier: string; outcome: string }>;
      expect(attempts.map((a) => a.tier)).toEqual([...Array(Math.max(1, c.localRequests)).fill('local'), 'cloud']);
      expect(attempts[0].outcome).toBe(c.outcome);
      expect(attempts.at(-1)!.outcome).toBe('ok');
      expect(line.tier).toBe('cloud');
      expect(line.status).toBe(200);
    });
  }

  it('fails over through the OpenAI SDK too', async () => {
    const cloud = await h.fake();
    cloud.always(answer('sdk via cloud'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: DEAD_URL, timeouts: fast },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const { data, response } = await sdk(p)
      .chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('sdk via cloud');
    expect(response.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(response.headers.get('x-llm-route-attempts')).toBe('2');
  });

  it('answers 502 with every attempt listed when every tier fails', async () => {
    const local = await h.fake();
    local.always((c) => c.error(401, 'bad key'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: fast },
        { name: 'cloud', url: DEAD_URL, timeouts: fast },
      ],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(502);
    expect(res.headers.get('x-llm-route-tier')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const error = openaiError(await res.json());
    const attempts = error.attempts as Array<{ tier: string; outcome: string }>;
    expect(attempts.map((a) => [a.tier, a.outcome])).toEqual([
      ['local', 'auth'],
      ['cloud', 'connection_refused'],
    ]);
    expect(error.message).toContain('local');
    expect(error.message).toContain('cloud');
  });
});

describe('unary: no failover when the payload is at fault', () => {
  const cases: Array<{ name: string; status: number; body: unknown }> = [
    {
      name: '400 bad parameter',
      status: 400,
      body: { error: { message: "Invalid value for 'temperature': must be <= 2.", type: 'invalid_request_error', param: 'temperature', code: null } },
    },
    { name: '422 validation', status: 422, body: { detail: [{ loc: ['body', 'messages'], msg: 'field required' }] } },
    {
      name: '400 content policy',
      status: 400,
      body: { error: { message: 'Your request was rejected by our content_policy', type: 'invalid_request_error', code: 'content_policy_violation' } },
    },
  ];
  for (const c of cases) {
    it(`passes ${c.name} through to the client, status and body`, async () => {
      const local = await h.fake();
      const cloud = await h.fake();
      const bytes = JSON.stringify(c.body);
      local.always((ctx) => {
        ctx.res.writeHead(c.status, { 'content-type': 'application/json' });
        ctx.res.end(bytes);
      });
      cloud.always(answer('must not be used'));
      const p = await h.proxy({
        tiers: [
          { name: 'local', url: local.url, timeouts: fast, retry: quickRetry },
          { name: 'cloud', url: cloud.url },
        ],
      });
      const res = await chat(p, { temperature: 7 });
      expect(res.status).toBe(c.status);
      expect(await res.text()).toBe(bytes);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(local.requests).toHaveLength(1);
      expect(cloud.requests).toHaveLength(0);
      const line = await logLine(p, res.headers.get('x-request-id'));
      expect(line.status).toBe(c.status);
      expect((line.attempts as unknown[]).length).toBe(1);
    });
  }

  it('the OpenAI SDK sees the upstream 400 as a BadRequestError with its message', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((c) => c.error(400, "Invalid value for 'temperature': must be <= 2.", { type: 'invalid_request_error' }));
    cloud.always(answer('must not be used'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const err = await sdk(p)
      .chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], temperature: 7 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain("Invalid value for 'temperature'");
    expect(cloud.requests).toHaveLength(0);
  });
});

describe('unary: broken and slow bodies', () => {
  it('fails over when the upstream dies mid-body', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    const full = JSON.stringify(completion('half of me'));
    local.always(async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(full)) });
      ctx.res.write(full.slice(0, Math.floor(full.length / 2)));
      await ctx.wait(30);
      ctx.destroy();
    });
    cloud.always(answer('whole from cloud'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: fast, retry: oneTry },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text).choices[0].message.content).toBe('whole from cloud');
    expect(text).not.toContain('half of me');
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0].outcome).toBe('connection_reset');
  });

  it('fails over when a chunked body is cut before its end', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(halfBody('destroy'));
    cloud.always(answer('whole from cloud'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: fast, retry: oneTry },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('whole from cloud');
  });

  it('retries a mid-body reset on the same tier when its retry budget allows', async () => {
    const local = await h.fake();
    local.next(halfBody('destroy')).always(answer('second try'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast, retry: quickRetry }] });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('second try');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(local.requests).toHaveLength(2);
  });

  it('fails over when a 200 body is not JSON', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/html' });
      ctx.res.end('<html>captive portal</html>');
    });
    cloud.always(answer('json from cloud'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: fast },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
  });

  it('a body that never finishes hits total_ms (bytes still trickling) and fails over; the abandoned socket is closed first', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(halfBody('trickle'));
    cloud.always(answer('in time'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: { connect_ms: 300, idle_ms: 5000, total_ms: 400 }, retry: quickRetry },
        { name: 'cloud', url: cloud.url, timeouts: fast },
      ],
    });
    const started = performance.now();
    const res = await chat(p, {});
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('in time');
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(2500);
    expect(local.requests).toHaveLength(1); // a timed-out tier is not retried
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0].outcome).toBe('total_timeout');
    const closedAt = await waitFor(() => local.socketClosedAt.get(local.requests[0].socketId));
    expect(closedAt).toBeLessThanOrEqual(cloud.requests[0].at);
  });

  it('total_ms also bounds an upstream that never sends headers', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(async (ctx) => {
      await ctx.closed;
    });
    cloud.always(answer('in time'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: { connect_ms: 300, ttft_ms: 100, idle_ms: 100, total_ms: 400 } },
        { name: 'cloud', url: cloud.url, timeouts: fast },
      ],
    });
    const started = performance.now();
    const res = await chat(p, {});
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    // ttft_ms and idle_ms (100) do not apply before the body begins; total_ms (400) does.
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(2500);
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0].outcome).toBe('total_timeout');
  });

  it('idle_ms between body bytes, once the body has begun, fails over', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(halfBody('stall'));
    cloud.always(answer('not idle'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: { connect_ms: 300, idle_ms: 200, total_ms: 5000 } },
        { name: 'cloud', url: cloud.url, timeouts: fast },
      ],
    });
    const started = performance.now();
    const res = await chat(p, {});
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0].outcome).toBe('idle_timeout');
    await waitFor(() => local.socketClosedAt.has(local.requests[0].socketId));
  });

  it('idle_ms does not apply before the body begins, and a slow steady body is not idle', async () => {
    const local = await h.fake();
    const full = JSON.stringify(completion('slow but steady'));
    local.always(async (ctx) => {
      await ctx.wait(350); // longer than idle_ms before the headers
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.flushHeaders();
      await ctx.wait(350); // and again before the first body byte
      const step = Math.ceil(full.length / 6);
      for (let i = 0; i < full.length; i += step) {
        ctx.res.write(full.slice(i, i + step));
        await ctx.wait(100); // 6 × 100 ms: longer than idle_ms in total, never idle
      }
      ctx.res.end();
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: { connect_ms: 300, idle_ms: 250, total_ms: 5000 } }] });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(full);
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
  });

  it('answers 504 when every tier timed out', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(halfBody('stall'));
    cloud.always(async (ctx) => {
      await ctx.closed;
    });
    const t = { connect_ms: 300, idle_ms: 150, total_ms: 300 };
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: t },
        { name: 'cloud', url: cloud.url, timeouts: t },
      ],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(504);
    expect(res.headers.get('x-llm-route-tier')).toBeNull();
    const error = openaiError(await res.json());
    expect((error.attempts as Array<{ outcome: string }>).map((a) => a.outcome)).toEqual(['idle_timeout', 'total_timeout']);
  });
});

describe('unary: retries, deadline, disconnects, size', () => {
  it('honours a Retry-After that fits in max_ms, on the same tier', async () => {
    const local = await h.fake();
    local.next((c) => c.error(429, 'slow down', { headers: { 'retry-after': '1' } })).always(answer('after the wait'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: fast, retry: { attempts: 2, base_ms: 5, max_ms: 4000 } }] });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(local.requests).toHaveLength(2);
    expect(local.requests[1].at - local.requests[0].at).toBeGreaterThanOrEqual(900);
  });

  it('fails over at once when Retry-After is longer than max_ms', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((c) => c.error(429, 'slow down', { headers: { 'retry-after': '30' } }));
    cloud.always(answer('cloud now'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: fast, retry: { attempts: 3, base_ms: 5, max_ms: 500 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const started = performance.now();
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(local.requests).toHaveLength(1);
  });

  it('the route deadline_ms does not apply to non-streaming requests', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      await ctx.wait(500);
      ctx.json(200, completion('slow but allowed'));
    });
    const p = await h.proxy({
      deadline_ms: 150,
      tiers: [{ name: 'local', url: local.url, timeouts: { connect_ms: 300, ttft_ms: 100, idle_ms: 100, total_ms: 3000 } }],
    });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('slow but allowed');
  });

  it('a client disconnect aborts the upstream request at once', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      await ctx.closed;
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: { connect_ms: 300, total_ms: 10_000 } }] });
    const abort = new AbortController();
    const pending = chat(p, {}, { signal: abort.signal }).catch((e: unknown) => e);
    await waitFor(() => local.requests.length === 1);
    const abortedAt = performance.now();
    abort.abort();
    expect(await pending).toBeInstanceOf(Error);
    const closedAt = await waitFor(() => local.socketClosedAt.get(local.requests[0].socketId), 2000, 'the upstream socket to close');
    expect(closedAt - abortedAt).toBeLessThan(500);
    const line = await waitFor(() => p.logs.find((l) => l.outcome === 'client_abort'));
    // The tier was at work on it: it is named, and its attempt is on record.
    expect(line.tier).toBe('local');
  });

  it('passes a large body (3 MB) through intact', async () => {
    const local = await h.fake();
    const big = Buffer.from(JSON.stringify(completion('é'.repeat(1_500_000))));
    local.always((ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.end(big);
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true);
  });
});

describe('unary: what reaches the upstream', () => {
  it('passes tools and unknown fields untouched, replacing only model', async () => {
    const local = await h.fake();
    let path = '';
    local.always((ctx) => {
      path = ctx.req.url ?? '';
      ctx.json(200, {
        ...completion(''),
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
      });
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, model: 'qwen2.5:7b' }] });
    const sent = {
      model: 'chat',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: '{"temp":3}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: { type: 'json_object' },
      x_custom: { a: 1 },
      temperature: 0.2,
      seed: 7,
      stop: ['\n\n'],
      logit_bias: { '50256': -100 },
      parallel_tool_calls: false,
      user: 'u-1',
    };
    const res = await fetch(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(sent) });
    expect(res.status).toBe(200);
    const got = (await res.json()) as { choices: Array<{ message: { tool_calls: unknown } }> };
    expect(got.choices[0].message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(local.requests[0].body).toEqual({ ...sent, model: 'qwen2.5:7b' });
    expect(path).toBe('/v1/chat/completions');
  });

  it('the SDK gets tool calls back', async () => {
    const local = await h.fake();
    local.always((ctx) =>
      ctx.json(200, {
        ...completion(''),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const out = await sdk(p).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'call f' }],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }],
      tool_choice: 'required',
    });
    expect(out.choices[0].finish_reason).toBe('tool_calls');
    expect(out.choices[0].message.tool_calls?.[0]).toMatchObject({ id: 'c', function: { name: 'f' } });
    expect(local.requests[0].body.tool_choice).toBe('required');
  });

  it("never forwards the client's Authorization or x-api-key; sends the provider's api_key as Bearer", async () => {
    const local = await h.fake();
    local.always(answer('ok'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, api_key: 'sk-tier-key' }] });
    const res = await chat(p, {}, { headers: { authorization: 'Bearer client-secret', 'x-api-key': 'client-key', 'api-key': 'client-azure-key' } });
    expect(res.status).toBe(200);
    const headers = local.requests[0].headers;
    expect(headers.authorization).toBe('Bearer sk-tier-key');
    expect(headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain('client-secret');
    expect(JSON.stringify(headers)).not.toContain('client-key');
  });

  it('sends no Authorization at all when the provider has no api_key (also from the SDK)', async () => {
    const local = await h.fake();
    local.always(answer('ok'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await chat(p, {}, { headers: { authorization: 'Bearer client-secret', 'x-api-key': 'client-key' } });
    expect(res.status).toBe(200);
    await sdk(p, 'sdk-client-key').chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(local.requests).toHaveLength(2);
    for (const r of local.requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect(r.headers['x-api-key']).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toMatch(/client-secret|client-key|sdk-client-key/);
    }
  });

  it('each tier sends its own provider key when failing over', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((c) => c.error(401, 'bad key'));
    cloud.always(answer('ok'));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, api_key: 'key-local' },
        { name: 'cloud', url: cloud.url, api_key: 'key-cloud' },
      ],
    });
    const res = await chat(p, {}, { headers: { authorization: 'Bearer client-secret' } });
    expect(res.status).toBe(200);
    expect(local.requests[0].headers.authorization).toBe('Bearer key-local');
    expect(cloud.requests[0].headers.authorization).toBe('Bearer key-cloud');
  });
});

describe('unary: usage accounting', () => {
  it('puts upstream usage in the request log and llm_tokens_total, on the tier that answered', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.next((c) => c.error(503, 'busy')).always(answer('local answer', { prompt_tokens: 11, completion_tokens: 7 }));
    cloud.always(answer('cloud answer', { prompt_tokens: 100, completion_tokens: 40 }));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, retry: oneTry },
        { name: 'cloud', url: cloud.url },
      ],
    });

    const first = await chat(p, {}); // local 503 → cloud
    expect(first.headers.get('x-llm-route-tier')).toBe('cloud');
    await first.arrayBuffer();
    const second = await chat(p, {}); // local answers
    expect(second.headers.get('x-llm-route-tier')).toBe('local');
    await second.arrayBuffer();

    const l1 = await logLine(p, first.headers.get('x-request-id'));
    expect(l1.usage).toEqual({ prompt_tokens: 100, completion_tokens: 40 });
    const l2 = await logLine(p, second.headers.get('x-request-id'));
    expect(l2.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7 });
    expect(typeof l2.duration_ms).toBe('number');

    const { samples } = await fetchMetrics(p);
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'cloud', kind: 'prompt' })).toBe(100);
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'cloud', kind: 'completion' })).toBe(40);
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'prompt' })).toBe(11);
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'completion' })).toBe(7);
    expect(metric(samples, 'llm_requests_total', { route: 'chat', tier: 'local', outcome: 'ok' })).toBe(1);
    expect(metric(samples, 'llm_requests_total', { route: 'chat', tier: 'cloud', outcome: 'ok' })).toBe(1);
    expect(metric(samples, 'llm_failovers_total', { route: 'chat', from_tier: 'local' })).toBe(1);
    // Unary requests have no TTFT.
    expect(metric(samples, 'llm_time_to_first_token_seconds_count', { route: 'chat' }) ?? 0).toBe(0);
  });
});

describe('unary: a client that hangs up while the tier generates', () => {
  it.each(['chat', 'messages'] as const)(
    'a %s client: the attempt in flight is on record as client_abort, and the tier on the log line and the usage row',
    async (protocol) => {
      const db = join(tempDir(), 'usage.db');
      const local = await h.fake();
      // Generating slowly: a whole answer comes only when it is done, which is after the client left.
      local.always(async (ctx) => {
        await Promise.race([ctx.closed, ctx.wait(10_000)]);
        if (!ctx.isClosed()) ctx.json(200, completion('too late'));
      });
      // The Messages client's tier is an OpenAI-type one: a translating tier, as in the report.
      const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, retry: oneTry }], top: { usage: { path: db } } });
      const leave = new AbortController();
      const asked =
        protocol === 'chat'
          ? sdk(p).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }, { signal: leave.signal })
          : new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 }).messages.create(
              { model: 'chat', max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] },
              { signal: leave.signal },
            );
      const pending = asked.catch((e: unknown) => e);
      await waitFor(() => local.requests.length === 1, 3000, 'the tier to be asked');
      await new Promise((resolve) => setTimeout(resolve, 100));
      leave.abort();
      expect(await pending).toBeInstanceOf(Error);
      await waitFor(() => local.socketClosedAt.get(local.requests[0].socketId), 2000, 'the upstream socket to close');

      const line = await waitFor(() => p.logs.find((l) => l.event === 'request'));
      expect(line).toMatchObject({ tier: 'local', outcome: 'client_abort', status: 499 });
      expect(line.attempts).toEqual([{ tier: 'local', attempt: 1, outcome: 'client_abort', ms: expect.any(Number), message: 'client disconnected' }]);
      expect((line.attempts as Array<{ ms: number }>)[0].ms).toBeGreaterThanOrEqual(90);

      await p.server.usage.flush();
      const [row] = readRequests(db);
      expect(row).toMatchObject({ protocol, tier: 'local', provider: 'p_local', model: 'local-model', outcome: 'client_abort', status: 499 });
      expect(readAttempts(db)).toMatchObject([{ tier: 'local', attempt: 1, outcome: 'client_abort' }]);
      // The client's leaving says nothing about the tier: it is as healthy as before.
      const health = (await (await fetch(`${p.origin}/healthz`)).json()) as { routes: { chat: { tiers: Array<{ state: string; failures: number }> } } };
      expect(health.routes.chat.tiers[0]).toMatchObject({ state: 'healthy', failures: 0 });
    },
  );
});
