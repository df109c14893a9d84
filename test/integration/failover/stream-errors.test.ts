import { describe, expect, it } from 'vitest';
import { completion, headersThenSilence, healthyStream, resetAtOnce } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, sleep, socketClosed, useHarness } from '../../helpers/harness.js';
import { chat, DEAD_URL, sseText } from '../../helpers/proxy.js';

/**
 * Streams: which upstream failures before commit are retried on the same tier, which go to the
 * client as they are, and what the client gets when no tier answers (docs/routing.md). The
 * failures that send a stream on to the next tier at once are one table in
 * stream-before-commit.test.ts.
 */

const h = useHarness();
const CLOUD_TEXT = 'from cloud';
const LOCAL_TEXT = 'from local';

async function twoTiers(opts: { local?: Record<string, unknown>; random?: () => number } = {}) {
  const local = await h.fake();
  const cloud = await h.fake();
  cloud.always(healthyStream(['from', ' cloud']));
  const p = await h.proxy(
    {
      tiers: [
        { name: 'local', url: local.url, ...opts.local },
        { name: 'cloud', url: cloud.url },
      ],
    },
    opts.random ? { random: opts.random } : {},
  );
  return { local, cloud, p };
}

describe('stream: a reset before headers', () => {
  it('retries a reset before headers on the same tier, which then answers (retry.attempts defaults to 2)', async () => {
    const { local, cloud, p } = await twoTiers({ local: { retry: { base_ms: 5 } } });
    local.next(resetAtOnce).always(healthyStream(['from', ' local']));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(sseText(await res.text())).toBe(LOCAL_TEXT);
    expect(local.requests).toHaveLength(2);
    expect(local.requests.map((r) => r.body.model)).toEqual(['local-model', 'local-model']);
    expect(cloud.requests).toHaveLength(0);
    await socketClosed(local, 0);
  });
});

describe('stream failover: 429 and 5xx', () => {
  it('retries a 429 with retry-after: 0 on the same tier, without backoff', async () => {
    // random 0.99 and base_ms 1000 would make a backoff of ~1 s: Retry-After 0 must win.
    const { local, cloud, p } = await twoTiers({ local: { retry: { base_ms: 1000 } }, random: () => 0.99 });
    local.next((ctx) => ctx.error(429, 'slow down', { headers: { 'retry-after': '0' } })).always(healthyStream(['from', ' local']));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(sseText(await res.text())).toBe(LOCAL_TEXT);
    expect(local.requests).toHaveLength(2);
    expect(local.requests[1].at - local.requests[0].at).toBeLessThan(500);
    expect(cloud.requests).toHaveLength(0);
  });

  it('fails over at once on a 429 whose Retry-After exceeds retry.max_ms (no second request to that tier)', async () => {
    const { local, cloud, p } = await twoTiers({ local: { retry: { attempts: 3, max_ms: 1000 } } });
    local.always((ctx) => ctx.error(429, 'rate limited', { headers: { 'retry-after': '30' } }));
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(900);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(sseText(await res.text())).toBe(CLOUD_TEXT);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });

  it('retries a 429 without Retry-After after an exponential backoff', async () => {
    // Full jitter with random fixed at 0.99: delay = floor(0.99 * base_ms) = 198 ms.
    const { local, cloud, p } = await twoTiers({ local: { retry: { base_ms: 200 } }, random: () => 0.99 });
    local.next((ctx) => ctx.error(429, 'rate limited')).always(healthyStream(['from', ' local']));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(sseText(await res.text())).toBe(LOCAL_TEXT);
    expect(local.requests).toHaveLength(2);
    expect(local.requests[1].at - local.requests[0].at).toBeGreaterThanOrEqual(150);
    expect(cloud.requests).toHaveLength(0);
  });

  it('lets the same tier answer on its second attempt after a 500', async () => {
    const { local, cloud, p } = await twoTiers({ local: { retry: { base_ms: 5 } } });
    local.next((ctx) => ctx.error(500, 'internal boom')).always(healthyStream(['from', ' local']));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    const text = await res.text();
    expect(sseText(text)).toBe(LOCAL_TEXT);
    expect(text).not.toContain('internal boom');
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toHaveLength(0);
  });

  it('retries a persistent 503 `attempts` times, then fails over', async () => {
    const { local, cloud, p } = await twoTiers({ local: { retry: { attempts: 3, base_ms: 5 } } });
    local.always((ctx) => ctx.error(503, 'overloaded'));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('4');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('overloaded');
    expect(local.requests).toHaveLength(3);
    expect(cloud.requests).toHaveLength(1);
    const log = await requestLog(p);
    expect((log.attempts as Array<{ outcome: string; status?: number }>).map((a) => [a.outcome, a.status])).toEqual([
      ['server_error', 503],
      ['server_error', 503],
      ['server_error', 503],
      ['ok', undefined],
    ]);
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_upstream_attempts_total', { route: 'chat', tier: 'local', result: 'server_error' })).toBe(3);
    expect(metric(metrics, 'llm_upstream_attempts_total', { route: 'chat', tier: 'cloud', result: 'ok' })).toBe(1);
    expect(metric(metrics, 'llm_failovers_total', { route: 'chat', from_tier: 'local', reason: 'server_error' })).toBe(1);
  });
});

describe('stream: retries never go past the route deadline', () => {
  it('a client that leaves during the backoff ends the request: no further attempt anywhere', async () => {
    // random 0.99, base_ms 2000: the backoff is ~2 s; the client leaves after ~150 ms.
    const { local, cloud, p } = await twoTiers({ local: { retry: { base_ms: 2000, max_ms: 4000 } }, random: () => 0.99 });
    local.always((ctx) => ctx.error(503, 'overloaded'));
    const ac = new AbortController();
    const pending = chat(p, { stream: true }, { signal: ac.signal }).catch((e: unknown) => e);
    await sleep(150);
    expect(local.requests).toHaveLength(1);
    ac.abort();
    expect(await pending).toBeInstanceOf(Error);
    const log = await requestLog(p, 1000);
    expect(log.outcome).toBe('client_abort');
    await sleep(100);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
  });

  it('a Retry-After that fits max_ms but not the deadline → next tier at once', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((ctx) => ctx.error(429, 'rate limited', { headers: { 'retry-after': '2' } }));
    cloud.always(healthyStream(['from', ' cloud']));
    const p = await h.proxy({
      deadline_ms: 800,
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 3 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(performance.now() - started).toBeLessThan(700);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(sseText(await res.text())).toBe(CLOUD_TEXT);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });
});

describe('stream: payload errors go to the client, no failover', () => {
  const cases: Array<[string, number, Record<string, unknown>]> = [
    [
      '400 invalid value',
      400,
      {
        error: {
          message: "Invalid value for 'temperature': expected a number between 0 and 2",
          type: 'invalid_request_error',
          param: 'temperature',
          code: 'invalid_value',
        },
      },
    ],
    [
      '400 content policy',
      400,
      { error: { message: 'Your request was rejected as a result of our safety system.', type: 'invalid_request_error', code: 'content_policy_violation' } },
    ],
    ['422 unprocessable', 422, { detail: [{ loc: ['body', 'messages'], msg: 'field required', type: 'value_error.missing' }] }],
    ['413 without a context-length message', 413, { error: { message: 'request entity too large', type: 'invalid_request_error' } }],
  ];
  it.each(cases)("%s → the upstream's status and body, next tier untouched", async (_label, status, body) => {
    const { local, cloud, p } = await twoTiers({ local: { retry: { attempts: 3, base_ms: 5 } } });
    local.always((ctx) => ctx.json(status, body, { 'x-upstream-marker': 'local' }));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
    expect(await res.json()).toEqual(body);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log).toMatchObject({ status, outcome: 'upstream_rejected', tier: 'local' });
  });
});

describe('stream: no tier answers', () => {
  it('every tier failing with mixed errors → 502 listing every attempt', async () => {
    const b = await h.fake();
    const c = await h.fake();
    b.always((ctx) => ctx.error(503, 'overloaded'));
    c.always((ctx) => ctx.error(401, 'bad key'));
    const p = await h.proxy({
      tiers: [
        { name: 'a', url: DEAD_URL },
        { name: 'b', url: b.url, retry: { base_ms: 5 } },
        { name: 'c', url: c.url },
      ],
    });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-llm-route-tier')).toBeNull();
    expect(res.headers.get('x-llm-route-attempts')).toBe('4');
    const body = (await res.json()) as { error: { code: string; type: string; message: string; attempts: Array<Record<string, unknown>> } };
    expect(body.error.code).toBe('all_tiers_failed');
    expect(typeof body.error.message).toBe('string');
    expect(body.error.attempts).toMatchObject([
      { tier: 'a', attempt: 1, outcome: 'connection_refused' },
      { tier: 'b', attempt: 1, outcome: 'server_error', status: 503 },
      { tier: 'b', attempt: 2, outcome: 'server_error', status: 503 },
      { tier: 'c', attempt: 1, outcome: 'auth', status: 401 },
    ]);
    expect(body.error.attempts).toHaveLength(4);
    expect(b.requests).toHaveLength(2);
    expect(c.requests).toHaveLength(1);
    await requestLog(p);
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_requests_total', { route: 'chat', tier: 'none', outcome: 'failed' })).toBe(1);
  });

  it('every tier timing out → 504 all_tiers_timed_out, each upstream socket closed', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(headersThenSilence);
    b.always(headersThenSilence);
    const p = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 200 } },
        { name: 'b', url: b.url, timeouts: { ttft_ms: 200 } },
      ],
    });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(504);
    expect(res.headers.get('x-llm-route-tier')).toBeNull();
    const body = (await res.json()) as { error: { code: string; attempts: Array<Record<string, unknown>> } };
    expect(body.error.code).toBe('all_tiers_timed_out');
    expect(body.error.attempts).toMatchObject([
      { tier: 'a', attempt: 1, outcome: 'ttft_timeout' },
      { tier: 'b', attempt: 1, outcome: 'ttft_timeout' },
    ]);
    expect(a.requests).toHaveLength(1);
    expect(b.requests).toHaveLength(1);
    await socketClosed(a, 0);
    await socketClosed(b, 0);
    await requestLog(p);
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_requests_total', { route: 'chat', tier: 'none', outcome: 'timeout' })).toBe(1);
  });

  it('the route deadline cuts two slow tiers short: 504 in about deadline_ms', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(headersThenSilence);
    b.always(headersThenSilence);
    const p = await h.proxy({
      deadline_ms: 500,
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 2000 } },
        { name: 'b', url: b.url, timeouts: { ttft_ms: 2000 } },
      ],
    });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(1500);
    const body = (await res.json()) as { error: { code: string; attempts: unknown[] } };
    expect(body.error.code).toBe('all_tiers_timed_out');
    expect(body.error.attempts.length).toBeGreaterThanOrEqual(1);
    expect(a.requests).toHaveLength(1);
    await socketClosed(a, 0);
    // Nothing is started once the deadline has passed; anything started was closed.
    for (let i = 0; i < b.requests.length; i++) await socketClosed(b, i);
  });
});

describe('an error answer that never ends', () => {
  it('a 503 whose body goes on and on is judged by its first 64 KiB: the next tier answers long before total_ms', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      ctx.res.writeHead(503, { 'content-type': 'application/json' });
      ctx.res.write('{"error":{"message":"overloaded","padding":"');
      while (!ctx.res.destroyed) {
        ctx.res.write('x'.repeat(8192));
        await ctx.wait(2);
      }
    });
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion(CLOUD_TEXT)));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: { total_ms: 60_000 }, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const started = performance.now();
    const res = await chat(p, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    // Generous: without the cap it waits for total_ms (60 s).
    expect(performance.now() - started).toBeLessThan(20_000);
    const log = await requestLog(p);
    expect(log.attempts).toMatchObject([
      { tier: 'local', outcome: 'server_error', status: 503 },
      { tier: 'cloud', outcome: 'ok' },
    ]);
    await socketClosed(local);
  });
});
