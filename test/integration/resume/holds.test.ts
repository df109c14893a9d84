import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import type { ConfigSpec } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { breakAfter, WORDS } from '../../helpers/resume-scripts.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

// A mid-stream resume starts its attempt as any attempt starts (src/proxy/attempt-start.ts):
// llm-route's own limits and budgets can refuse it, and the client then gets the clean error event.

const h = useHarness();
const tempDir = useTempDirs();

async function brokenThenGuarded(guard: Pick<ConfigSpec, 'top'> & { provider?: Record<string, unknown>; failFirst?: boolean }) {
  const a = await h.fake();
  const b = await h.fake();
  if (guard.failFirst) a.next((ctx) => ctx.json(500, { error: { message: 'down for a moment' } }));
  a.always(breakAfter(2));
  b.always(healthyStream(WORDS.slice(2)));
  const proxy = await h.proxy({
    tiers: [
      { name: 'a', url: a.url, retry: { attempts: 1 } },
      { name: 'b', url: b.url, retry: { attempts: 1 }, ...(guard.provider ? { provider: guard.provider } : {}) },
    ],
    routeKeys: { on_break: 'resume' },
    top: guard.top,
  });
  return { a, b, proxy };
}

describe('a resume takes its holds on limits and budgets like any attempt', () => {
  it('a budget that cannot hold it refuses it: nothing is sent, the client gets stream_interrupted', async () => {
    const { b, proxy } = await brokenThenGuarded({
      top: { usage: { path: join(tempDir(), 'usage.db') }, budgets: [{ scope: 'provider:p_b', per: 'day', tokens: 5 }] },
    });
    for (const protocol of ['chat', 'messages', 'responses'] as const) {
      const seen = await streamWith(protocol, proxy);
      expect(seen.text).toBe(WORDS.slice(0, 2).join(''));
      expect(seen.failed).toMatch(/resume on tier b was refused: budget provider:p_b per day exhausted/);
    }
    expect(b.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toBeUndefined();
    expect(line.attempts).toEqual([expect.objectContaining({ tier: 'a', outcome: 'ok' }), expect.objectContaining({ tier: 'b', outcome: 'budget' })]);
  });

  it('a provider limit that has no room refuses it the same way (and the tier stays healthy)', async () => {
    // One request a minute at b: a first request that fails over to b takes it.
    const { b, proxy } = await brokenThenGuarded({ failFirst: true, provider: { limits: { rpm: 1, queue_ms: 0 } } });
    expect((await streamWith('chat', proxy)).failed).toBeNull();
    expect(b.requests).toHaveLength(1);
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(WORDS.slice(0, 2).join(''));
    expect(seen.failed).toMatch(/resume on tier b was refused: provider p_b at its rpm limit/);
    expect(b.requests).toHaveLength(1);
    const line = await waitFor(() => proxy.logs.filter((l) => l.event === 'request')[1], 3000, 'the second request line');
    expect(line.attempts).toEqual([expect.objectContaining({ tier: 'a', outcome: 'ok' }), expect.objectContaining({ tier: 'b', outcome: 'rate_limited' })]);
    const routes = (await (await fetch(`${proxy.origin}/admin/routes`)).json()) as { routes: { chat: { tiers: Array<{ name: string; state: string }> } } };
    expect(routes.routes.chat.tiers.find((t) => t.name === 'b')?.state).toBe('healthy');
  });

  it('a resume on a cold tier gets its cold_ttft_ms, as any attempt there would', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(breakAfter(2));
    // b has never answered (cold): its model loads for 600 ms, past ttft_ms but inside cold_ttft_ms.
    b.always(async (ctx) => {
      await ctx.wait(600);
      return healthyStream(WORDS.slice(2))(ctx);
    });
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, retry: { attempts: 1 } },
        { name: 'b', url: b.url, retry: { attempts: 1 }, timeouts: { ttft_ms: 200, cold_ttft_ms: 5000 } },
      ],
      routeKeys: { on_break: 'resume' },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(WORDS.join(''));
    expect((await requestLog(proxy)).resumed).toMatchObject({ to: 'b', result: 'ok' });
  });

  it('with room, the same route resumes (the guard is what refused above)', async () => {
    const { b, proxy } = await brokenThenGuarded({ provider: { limits: { tpm: 1_000_000, queue_ms: 0 } } });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(WORDS.join(''));
    expect(b.requests).toHaveLength(1);
  });
});
