import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { completion, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, useHarness, waitFor } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { describeEachBackend, instances, useRedis } from '../../helpers/state-kit.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const redis = useRedis();
const tempDir = useTempDirs();

const MAX_TOKENS = 300;
const DAY_END_S = () => Math.ceil((Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1) - Date.now()) / 1000);

/** Reports the whole max_tokens as used, and a prompt of 1 token (what llm-route estimates for "hi"): the worst case is what is spent. */
const spendsItAll: Script = (ctx) => {
  const max = Number(ctx.body.max_tokens ?? ctx.body.max_completion_tokens ?? 0);
  ctx.json(200, completion('spent', { prompt_tokens: 1, completion_tokens: max }));
};

async function remaining(p: RunningProxy): Promise<number | undefined> {
  return metric((await fetchMetrics(p)).samples, 'llm_budget_remaining', { scope: 'route:chat', unit: 'tokens' });
}

describeEachBackend('budgets on the request path (%s)', (backend) => {
  it("many parallel requests through both instances never overspend a small budget; the rest get 429 with Retry-After at the window's end", async () => {
    const fake = await h.fake();
    fake.always(spendsItAll);
    const limit = 2000;
    const proxies = await instances(h, backend, redis, {
      tiers: [{ name: 'cloud', url: fake.url }],
      top: { usage: { path: join(tempDir(), 'usage.db') }, budgets: [{ scope: 'route:chat', per: 'day', tokens: limit }] },
    });
    const openai = proxies.map((p) => new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 }));
    const anthropic = proxies.map((p) => new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 }));
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 3
        ? anthropic[i % 2].messages.create({ model: 'chat', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] })
        : openai[i % 2].chat.completions.create({ model: 'chat', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] }),
    );
    const results = await Promise.allSettled(calls);
    const served = results.filter((r) => r.status === 'fulfilled').length;
    // Each reserves 1 + 300 tokens: 6 fit in 2000.
    expect(served).toBe(Math.floor(limit / (1 + MAX_TOKENS)));
    expect(fake.requests).toHaveLength(served);
    const spent = fake.requests.reduce((sum, r) => sum + 1 + Number(r.body.max_tokens ?? r.body.max_completion_tokens), 0);
    expect(spent).toBeLessThanOrEqual(limit);
    for (const r of results) {
      if (r.status === 'fulfilled') continue;
      const err = r.reason as { status: number; headers: Headers | Record<string, string>; error: unknown };
      expect(err.status).toBe(429);
      const retryAfter = Number(err.headers instanceof Headers ? err.headers.get('retry-after') : err.headers['retry-after']);
      expect(Math.abs(retryAfter - DAY_END_S())).toBeLessThanOrEqual(5);
    }
    const anthropicRefusal = results.find((r, i) => i % 4 === 3 && r.status === 'rejected') as PromiseRejectedResult;
    expect((anthropicRefusal.reason as { error: unknown }).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    const openaiRefusal = results.find((r, i) => i % 4 !== 3 && r.status === 'rejected') as PromiseRejectedResult;
    expect((openaiRefusal.reason as { error: unknown }).error).toMatchObject({ code: 'budget_exhausted', type: expect.any(String) });
    // llm_budget_remaining is what is really left.
    await waitFor(async () => (await remaining(proxies[1])) === limit - spent, 6000, 'llm_budget_remaining to settle');
    const skipped = proxies.flatMap((p) => p.logs).find((l) => l.event === 'request' && l.status === 429);
    expect(skipped?.attempts).toMatchObject([{ tier: 'cloud', outcome: 'budget' }]);
  });

  it('an exhausted paid tier is skipped (health-neutral) and the next tier answers; its hold is settled to the usage, the others released', async () => {
    const paid = await h.fake();
    const free = await h.fake();
    // In the three-at-once step below, the paid tier keeps its answers until the third request
    // has been placed (on the free tier, or a third on paid): the two holds are held together
    // whatever the machine's speed, not only if the third arrives before the first has finished.
    let thirdPlaced!: () => void;
    const placed = new Promise<void>((resolve) => (thirdPlaced = resolve));
    paid.always(async (ctx) => {
      if (ctx.index === 8) thirdPlaced();
      if (ctx.index >= 6) await Promise.race([placed, ctx.wait(5000)]);
      ctx.json(200, completion('paid', { prompt_tokens: 1, completion_tokens: 9 }));
    });
    free.always((ctx) => {
      thirdPlaced();
      ctx.json(200, completion('free'));
    });
    const [a, b] = await instances(h, backend, redis, {
      tiers: [
        { name: 'paid', url: paid.url },
        { name: 'free', url: free.url },
      ],
      top: { usage: { path: join(tempDir(), 'usage.db') }, budgets: [{ scope: 'provider:p_paid', per: 'month', tokens: 700 }] },
    });
    const post = (p: RunningProxy) =>
      fetch(`${p.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] }),
      });
    // 301 reserved, 10 spent, each: the settle gives the rest back, so many fit one after the other.
    for (let i = 0; i < 6; i++) expect((await post(i % 2 ? b : a)).headers.get('x-llm-route-tier')).toBe('paid');
    // Two at once hold 602 of the 640 left; a third finds no room and goes to the free tier.
    const three = await Promise.all([post(a), post(b), post(a)]);
    expect(three.map((r) => r.headers.get('x-llm-route-tier')).sort()).toEqual(['free', 'paid', 'paid']);
    expect(paid.requests).toHaveLength(8);
    const routes = (await (await fetch(`${a.origin}/admin/routes`)).json()) as { routes: { chat: { tiers: Array<{ state: string }> } } };
    expect(routes.routes.chat.tiers[0].state).toBe('healthy');
    await waitFor(
      async () => metric((await fetchMetrics(a)).samples, 'llm_budget_remaining', { scope: 'provider:p_paid', unit: 'tokens' }) === 700 - 8 * 10,
      6000,
      'the remaining budget',
    );
  });
});
