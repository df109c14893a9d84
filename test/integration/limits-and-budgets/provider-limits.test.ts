import OpenAI, { RateLimitError } from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, sleep, useHarness } from '../../helpers/harness.js';
import { chat, type RunningProxy } from '../../helpers/proxy.js';
import { describeEachBackend, instances, useRedis } from '../../helpers/state-kit.js';

const h = useHarness();
const redis = useRedis();

const sdk = (p: RunningProxy): OpenAI => new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
const ask = (p: RunningProxy, max_tokens?: number) =>
  sdk(p).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...(max_tokens ? { max_tokens } : {}) });

/** Answers after `ms`, counting how many requests it holds at once. */
function heldFor(ms: number, seen: { now: number; max: number }): Script {
  return async (ctx) => {
    seen.now++;
    seen.max = Math.max(seen.max, seen.now);
    await ctx.wait(ms);
    seen.now--;
    ctx.json(200, completion('held'));
  };
}

describeEachBackend('provider limits (%s)', (backend) => {
  it("rpm is shared by the instances: a burst gets the bucket (within one request), the rest 429 with Retry-After in the client's protocol", async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('ok')));
    const proxies = await instances(h, backend, redis, { tiers: [{ name: 'paid', url: fake.url, provider: { limits: { rpm: 120, queue_ms: 0 } } }] });
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => ask(proxies[i % 2])));
    const elapsedS = (performance.now() - started) / 1000;
    const served = results.filter((r) => r.status === 'fulfilled').length;
    // The bucket holds one second of 120 rpm: 2 requests, refilled at 2 per second. Tolerance: one request.
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThanOrEqual(2 + 2 * elapsedS + 1);
    expect(fake.requests).toHaveLength(served);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as RateLimitError);
    expect(refused.length).toBe(20 - served);
    for (const err of refused) {
      expect(err).toBeInstanceOf(RateLimitError);
      expect(err.status).toBe(429);
      expect(Number(err.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((err.error as { code?: string }).code).toBe('rate_limited');
    }
    // Anthropic clients get Anthropic's shape.
    const messages = await fetch(`${proxies[1].origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    if (messages.status === 429) expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    const samples = (await fetchMetrics(proxies[0])).samples;
    const limited =
      backend === 'embedded'
        ? metric(samples, 'llm_rate_limited_total', { provider: 'p_paid' })
        : (metric(samples, 'llm_rate_limited_total', { provider: 'p_paid' }) ?? 0) +
          (metric((await fetchMetrics(proxies[1])).samples, 'llm_rate_limited_total', { provider: 'p_paid' }) ?? 0);
    expect(limited).toBeGreaterThanOrEqual(refused.length);
    // A skip is not the tier's failure: its health and circuit are untouched.
    const routes = (await (await fetch(`${proxies[0].origin}/admin/routes`)).json()) as {
      routes: { chat: { tiers: Array<{ state: string; limits: Record<string, unknown> }> } };
    };
    expect(routes.routes.chat.tiers[0].state).toBe('healthy');
    expect(routes.routes.chat.tiers[0].limits).toMatchObject({ rpm: 120, tpm: null, concurrency: null, queue_ms: 0 });
  });

  it('over the limit a request waits up to queue_ms (a leaky bucket), then the next tier is tried', async () => {
    const paid = await h.fake();
    const spare = await h.fake();
    paid.always((ctx) => ctx.json(200, completion('paid')));
    spare.always((ctx) => ctx.json(200, completion('spare')));
    const proxies = await instances(h, backend, redis, {
      tiers: [
        { name: 'paid', url: paid.url, provider: { limits: { rpm: 600, queue_ms: 250 } } },
        { name: 'spare', url: spare.url },
      ],
    });
    // 600 rpm: a bucket of 10, one more every 100 ms; 250 ms of queue lets 2 more through.
    const startedAt = performance.now();
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => chat(proxies[i % 2], {})));
    const elapsedMs = performance.now() - startedAt;
    const tiers = results.map((r) => r.headers.get('x-llm-route-tier'));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const onPaid = tiers.filter((t) => t === 'paid').length;
    expect(onPaid).toBeGreaterThanOrEqual(12);
    // The bucket refills while the requests are under way too: on a loaded machine that is one more.
    expect(onPaid).toBeLessThanOrEqual(Math.min(14, Math.max(13, 10 + Math.ceil((250 + elapsedMs) / 100))));
    expect(paid.requests).toHaveLength(onPaid);
    expect(spare.requests).toHaveLength(16 - onPaid);
    const log =
      proxies[0].logs.find((l) => l.event === 'request' && l.tier === 'spare') ?? proxies[1].logs.find((l) => l.event === 'request' && l.tier === 'spare');
    expect(log?.attempts).toMatchObject([
      { tier: 'paid', outcome: 'rate_limited' },
      { tier: 'spare', outcome: 'ok' },
    ]);
    expect((log?.attempts as Array<{ ms: number }> | undefined)?.[0]?.ms).toBeGreaterThanOrEqual(0);
  });

  it('concurrency holds across the instances; waiting requests get a slot as one frees up', async () => {
    const fake = await h.fake();
    const seen = { now: 0, max: 0 };
    fake.always(heldFor(150, seen));
    const proxies = await instances(h, backend, redis, { tiers: [{ name: 'paid', url: fake.url, provider: { limits: { concurrency: 2, queue_ms: 5000 } } }] });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(proxies[i % 2], {})));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(seen.max).toBe(2);
    expect(fake.requests).toHaveLength(8);
  });

  it('tpm reserves prompt estimate + max tokens and gives back what the answer did not use; a request larger than the bucket goes when it is full', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('ok', { prompt_tokens: 1, completion_tokens: 3 })));
    // 3000 tpm: a bucket of 50 tokens. Each ask reserves 1 (prompt estimate) + 20.
    const [p] = await instances(h, backend, redis, { tiers: [{ name: 'paid', url: fake.url, provider: { limits: { tpm: 3000, queue_ms: 0 } } }] });
    const burst = await Promise.allSettled([ask(p, 20), ask(p, 20), ask(p, 20)]);
    expect(burst.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    await sleep(1100); // full again
    // One after the other, each gives back 17 of its 21: without that the third would find the bucket empty.
    for (let i = 0; i < 5; i++) await ask(p, 20);
    await sleep(1100);
    // 201 > 50: let through because the bucket is full; it used all of it, so the next waits for the deficit.
    fake.next((ctx) => ctx.json(200, completion('long', { prompt_tokens: 1, completion_tokens: 200 })));
    await ask(p, 200);
    await expect(ask(p, 20)).rejects.toBeInstanceOf(RateLimitError);
    expect(fake.requests).toHaveLength(8);
  });

  it('the thundering herd: the local tier dies under 40 concurrent clients; the paid tier sees at most its rate, the rest get 429', async () => {
    const local = await h.fake();
    const paid = await h.fake();
    local.always(healthyStream(['local']));
    paid.always(healthyStream(['paid']));
    const proxies = await instances(h, backend, redis, {
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 }, circuit: { failures: 2, cooldown_ms: 60_000 } },
        { name: 'paid', url: paid.url, provider: { limits: { rpm: 60, queue_ms: 1000 } } },
      ],
    });
    const statuses = new Map<number, number>();
    let retryAfter = 0;
    const until = performance.now() + 3000;
    setTimeout(() => void local.close(), 300);
    await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        while (performance.now() < until) {
          const res = await chat(proxies[i % 2], { stream: true });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 429) retryAfter = Number(res.headers.get('retry-after'));
          await res.arrayBuffer();
          if (res.status !== 200) await sleep(50);
        }
      }),
    );
    // 60 rpm: one request a second and a bucket of one. Tolerance: one request.
    const times = paid.requests.map((r) => r.at);
    expect(times.length).toBeGreaterThanOrEqual(2);
    const spanS = (times[times.length - 1] - times[0]) / 1000;
    expect(times.length).toBeLessThanOrEqual(1 + spanS + 1);
    expect(times.length).toBeLessThanOrEqual(6);
    expect([...statuses.keys()].sort()).toEqual([200, 429]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(local.requests.length).toBeGreaterThan(0);
  });
});

describe('a retry waiting for room in the rpm bucket', () => {
  it("waits no longer than the stream's deadline (not the whole queue_ms)", async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.error(503, 'busy'));
    // rpm 12: a bucket of one request, the next one 5 s later: within queue_ms (8 s), past the deadline.
    const p = await h.proxy({
      deadline_ms: 600,
      tiers: [{ name: 'paid', url: fake.url, retry: { attempts: 2, base_ms: 10, max_ms: 10 }, provider: { limits: { rpm: 12, queue_ms: 8000 } } }],
    });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    await res.arrayBuffer();
    expect(res.status).toBeGreaterThanOrEqual(400);
    // Generous: past the 600 ms deadline by scheduling only, far from the 5 s the bucket needs.
    expect(performance.now() - started).toBeLessThan(4000);
    expect(fake.requests).toHaveLength(1);
  });
});
