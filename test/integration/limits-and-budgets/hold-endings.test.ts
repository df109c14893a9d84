import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream, roleThenSilence, type Script } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import type { RunningProxy, TierSpec } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { breakAfter, WORDS } from '../../helpers/resume-scripts.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

// A request's holds at its tiers — a concurrency slot and tpm tokens at each tier's provider, a
// budget reservation — end however the request ends (src/proxy/request-holds.ts): every kind of
// ending below leaves no slot taken and nothing reserved, and a tier the request has left gives
// its slot back at once, while the request goes on elsewhere.

const h = useHarness();
const tempDir = useTempDirs();

const LIMITS = { concurrency: 4, tpm: 1_000_000, queue_ms: 0 };

/** A route whose every tier's provider has limits, under a budget on the route. */
async function guarded(tiers: Array<Pick<TierSpec, 'name' | 'url'> & Partial<TierSpec>>, routeKeys: Record<string, unknown> = {}): Promise<RunningProxy> {
  return h.proxy({
    tiers: tiers.map((t) => ({ retry: { attempts: 1 }, ...t, provider: { limits: LIMITS } })),
    routeKeys,
    top: { usage: { path: join(tempDir(), 'usage.db') }, budgets: [{ scope: 'route:chat', per: 'day', tokens: 10_000_000 }] },
  });
}

/** Concurrency slots the request path holds at the provider of tier `name` now. */
function slotsAt(proxy: RunningProxy, name: string): number {
  return proxy.server.state.limitsView(`p_${name}`, LIMITS).in_flight;
}

/** Every slot back, and nothing reserved on the route's budget. */
async function nothingHeld(proxy: RunningProxy, names: string[], budget = true): Promise<void> {
  await waitFor(
    async () => {
      if (names.some((name) => slotsAt(proxy, name) !== 0)) return false;
      if (!budget) return true;
      const [status] = await proxy.server.state.budgets.remaining('route:chat');
      return status.reserved === 0;
    },
    6000,
    `no slot at ${names.join(', ')} and nothing reserved`,
  );
}

const openai = (proxy: RunningProxy) => new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });

/** Streams a chat answer; `atFirst` runs at its first content, while the stream is open. */
async function streamChat(proxy: RunningProxy, atFirst: () => void | Promise<void> = () => undefined): Promise<string> {
  const stream = await openai(proxy).chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
  let text = '';
  for await (const chunk of stream) {
    const piece = chunk.choices[0]?.delta.content ?? '';
    if (piece && !text) await atFirst();
    text += piece;
  }
  return text;
}

const FULL = WORDS.join('');
const slowly = healthyStream(WORDS, { delayMs: 40 });
const serverError: Script = (ctx) => ctx.json(500, { error: { message: 'boom' } });

describe("a request's holds end however it ends", () => {
  it('commit and finish (a stream), and a whole answer: the slot and the reservation are given back', async () => {
    const a = await h.fake();
    a.next(healthyStream(WORDS), (ctx) => ctx.json(200, completion('whole')));
    const proxy = await guarded([{ name: 'a', url: a.url }]);
    expect(await streamChat(proxy)).toBe(FULL);
    await nothingHeld(proxy, ['a']);
    const whole = await openai(proxy).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(whole.choices[0].message.content).toBe('whole');
    await nothingHeld(proxy, ['a']);
  });

  it('failover: the failed tier gives its slot back before the next one answers, and the next gives its own at the end', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(serverError);
    b.always(slowly);
    const proxy = await guarded([
      { name: 'a', url: a.url },
      { name: 'b', url: b.url },
    ]);
    const during: number[][] = [];
    expect(await streamChat(proxy, () => void during.push([slotsAt(proxy, 'a'), slotsAt(proxy, 'b')]))).toBe(FULL);
    expect(during).toEqual([[0, 1]]);
    await nothingHeld(proxy, ['a', 'b']);
  });

  it('a retry on the same tier keeps its one slot, and gives it back at the end', async () => {
    const a = await h.fake();
    a.next(serverError, slowly);
    const proxy = await guarded([{ name: 'a', url: a.url, retry: { attempts: 2, base_ms: 1, max_ms: 5 } }]);
    const during: number[] = [];
    expect(await streamChat(proxy, () => void during.push(slotsAt(proxy, 'a')))).toBe(FULL);
    expect(during).toEqual([1]);
    expect(a.requests).toHaveLength(2);
    await nothingHeld(proxy, ['a']);
  });

  it("a hedge's race: the loser's slot is back while the winner streams, whichever of the two wins", async () => {
    for (const winner of ['first', 'second'] as const) {
      const a = await h.fake();
      const b = await h.fake();
      // The first answers late (after its hedge started) or never; its hedge answers at once or never.
      a.always(winner === 'first' ? (ctx) => ctx.wait(150).then(() => slowly(ctx)) : roleThenSilence('a'));
      b.always(winner === 'first' ? roleThenSilence('b') : slowly);
      const proxy = await guarded(
        [
          { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
          { name: 'b', url: b.url },
        ],
        { hedge_ms: 50 },
      );
      const during: number[][] = [];
      expect(await streamChat(proxy, () => void during.push([slotsAt(proxy, 'a'), slotsAt(proxy, 'b')]))).toBe(FULL);
      expect(during).toEqual([winner === 'first' ? [1, 0] : [0, 1]]);
      const line = await waitFor(() => proxy.logs.find((l) => l.event === 'request'), 3000, 'the request line');
      expect(line.hedged).toMatchObject({ winner: winner === 'first' ? 'a' : 'b' });
      await nothingHeld(proxy, ['a', 'b']);
    }
  });

  it('a mid-stream resume on the next tier: both holds end with the request', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(breakAfter(2));
    b.always(healthyStream(WORDS.slice(2)));
    const proxy = await guarded(
      [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      { on_break: 'resume' },
    );
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    expect((await waitFor(() => proxy.logs.find((l) => l.event === 'request'), 3000, 'the request line')).resumed).toMatchObject({ result: 'ok' });
    await nothingHeld(proxy, ['a', 'b']);
  });

  it('a client that hangs up, mid-stream and while a whole answer is awaited', async () => {
    const a = await h.fake();
    a.next(slowly, async (ctx) => {
      await ctx.wait(2000);
      if (!ctx.isClosed()) ctx.json(200, completion('late'));
    });
    const proxy = await guarded([{ name: 'a', url: a.url }]);
    const streaming = new AbortController();
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      signal: streaming.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    streaming.abort();
    await waitFor(() => proxy.logs.find((l) => l.event === 'request' && l.outcome === 'client_abort'), 3000, 'the stream to end as client_abort');
    await nothingHeld(proxy, ['a']);

    const waiting = new AbortController();
    const unary = fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      signal: waiting.signal,
    }).catch(() => null);
    await waitFor(() => slotsAt(proxy, 'a') === 1, 3000, 'the whole answer to hold its slot');
    waiting.abort();
    await unary;
    await waitFor(() => proxy.logs.filter((l) => l.event === 'request' && l.outcome === 'client_abort').length === 2, 3000, 'the second client_abort');
    await nothingHeld(proxy, ['a']);
  });

  it('the payload rejected by the tier (a 400): nothing is kept', async () => {
    const a = await h.fake();
    a.always((ctx) => ctx.json(400, { error: { message: 'messages: bad role', type: 'invalid_request_error' } }));
    const proxy = await guarded([{ name: 'a', url: a.url }]);
    await expect(openai(proxy).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 400 });
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'request'), 3000, 'the request line');
    expect(line.outcome).toBe('upstream_rejected');
    await nothingHeld(proxy, ['a']);
  });

  it('a shutdown that cuts a stream: its slot is given back as it ends', async () => {
    const a = await h.fake();
    a.always(healthyStream(WORDS, { delayMs: 300 }));
    const proxy = await guarded([{ name: 'a', url: a.url }]);
    const cut = streamChat(proxy, async () => {
      expect(slotsAt(proxy, 'a')).toBe(1);
      await proxy.server.close(50);
    }).catch((err: unknown) => err);
    await cut;
    // The usage log closed with the server: the budget is not asked, the slot is.
    await nothingHeld(proxy, ['a'], false);
    expect(proxy.logs.find((l) => l.event === 'request')).toMatchObject({ outcome: 'interrupted' });
  });
});
