import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect, it } from 'vitest';
import { anthropicEvent, anthropicText, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import type { Script } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { breakAfter, WORDS } from '../../helpers/resume-scripts.js';
import { describeEachBackend, instances, useRedis } from '../../helpers/state-kit.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

// What a request's holds at its tiers are charged (docs/usage.md and docs/shared-state.md, "Provider limits"):
// each tier for the tokens it used itself — a hedge's loser for what its upstream reported
// before it was stopped, each tier of a recovered stream for its own part of the answer.

const h = useHarness();
const redis = useRedis();
const tempDir = useTempDirs();

const LIMIT = 1_000_000;

/** Anthropic's message_start with 1,234 input tokens, then nothing: a first tier its hedge beats. */
const reportsThenStalls: Script = async (ctx) => {
  startAnthropicStream(ctx, { input_tokens: 1234, output_tokens: 1 });
  anthropicEvent(ctx, 'ping', {});
  await ctx.closed;
};

/** The whole answer at once, 40 input and 9 output tokens. */
const answersAtOnce: Script = (ctx) => {
  startAnthropicStream(ctx, { input_tokens: 40, output_tokens: 1 });
  anthropicText(ctx, 0, WORDS);
  endAnthropicStream(ctx, 'end_turn', 9);
};

/** What a scope's budget has spent once nothing is held on it any more (every hold settled or given back). */
async function spentOn(proxy: RunningProxy, scope: string): Promise<number> {
  const settled = await waitFor(
    async () => {
      const [status] = await proxy.server.state.budgets.remaining(scope);
      return status && status.reserved === 0 ? status : null;
    },
    6000,
    `the holds on ${scope} to settle`,
  );
  return settled.spent;
}

const request = { model: 'chat', max_tokens: 900, messages: [{ role: 'user' as const, content: 'hi' }] };

describeEachBackend("a hedge's loser is charged for what it used (%s)", (backend) => {
  it("its upstream's tokens go to its own provider's and the route's budgets, the winner's to the winner's", async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(reportsThenStalls);
    b.always(answersAtOnce);
    const [proxy] = await instances(
      h,
      backend,
      redis,
      {
        tiers: [
          { name: 'a', url: a.url, type: 'anthropic' },
          { name: 'b', url: b.url, type: 'anthropic' },
        ],
        routeKeys: { hedge_ms: 100 },
        top: {
          usage: { path: join(tempDir(), 'usage.db') },
          budgets: [
            { scope: 'provider:p_a', per: 'day', tokens: LIMIT },
            { scope: 'provider:p_b', per: 'day', tokens: LIMIT },
            { scope: 'route:chat', per: 'day', tokens: LIMIT },
          ],
        },
      },
      1,
    );
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const stream = client.messages.stream({ ...request, stream: true });
    expect(await stream.finalText()).toBe(WORDS.join(''));
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'request'), 3000, 'the request line');
    expect(line.loser_usage).toMatchObject({ tier: 'a', prompt_tokens: 1234, completion_tokens: 1 });
    expect(line.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 9 });
    expect(await spentOn(proxy, 'provider:p_a')).toBe(1235);
    expect(await spentOn(proxy, 'provider:p_b')).toBe(49);
    expect(await spentOn(proxy, 'route:chat')).toBe(1235 + 49);
  });
});

it("a hedge's loser is charged to its provider's tpm: the next request finds the tokens it used taken", async () => {
  const a = await h.fake();
  const b = await h.fake();
  a.always(reportsThenStalls);
  b.always(answersAtOnce);
  // 2,000 tokens a minute at a's provider: each request asks 1 + 900; the loser used 1,235 of them.
  const proxy = await h.proxy({
    tiers: [
      { name: 'a', url: a.url, type: 'anthropic', provider: { limits: { tpm: 2000, queue_ms: 0 } } },
      { name: 'b', url: b.url, type: 'anthropic' },
    ],
    routeKeys: { hedge_ms: 100 },
  });
  const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
  expect(await client.messages.stream({ ...request, stream: true }).finalText()).toBe(WORDS.join(''));
  expect(await client.messages.stream({ ...request, stream: true }).finalText()).toBe(WORDS.join(''));
  const lines = await waitFor(
    () => {
      const found = proxy.logs.filter((l) => l.event === 'request');
      return found.length === 2 ? found : null;
    },
    3000,
    'both request lines',
  );
  expect(lines[0].hedged).toMatchObject({ winner: 'b', loser: 'a' });
  // 2,000 − 1,235 left (and a few refilled): no room for 901 more, so a is skipped without a request.
  expect(lines[1].attempts).toEqual([expect.objectContaining({ tier: 'a', outcome: 'rate_limited' }), expect.objectContaining({ tier: 'b', outcome: 'ok' })]);
  expect(a.requests).toHaveLength(1);
});

it('a stream recovered on another tier charges each tier once, for its own part: the first what it delivered, the second its usage', async () => {
  const a = await h.fake();
  const b = await h.fake();
  a.always(breakAfter(2));
  b.always((ctx) => {
    ctx.startStream();
    ctx.role();
    for (const word of WORDS.slice(2)) ctx.content(word);
    ctx.finish();
    ctx.usage(5000, 7);
    ctx.done();
  });
  const proxy = await h.proxy({
    tiers: [
      { name: 'a', url: a.url, retry: { attempts: 1 } },
      { name: 'b', url: b.url, retry: { attempts: 1 } },
    ],
    routeKeys: { on_break: 'resume' },
    top: {
      usage: { path: join(tempDir(), 'usage.db') },
      budgets: [
        { scope: 'provider:p_a', per: 'day', tokens: LIMIT },
        { scope: 'provider:p_b', per: 'day', tokens: LIMIT },
        { scope: 'route:chat', per: 'day', tokens: LIMIT },
      ],
    },
  });
  const seen = await streamWith('chat', proxy);
  expect(seen.failed).toBeNull();
  expect(seen.text).toBe(WORDS.join(''));
  const line = await waitFor(() => proxy.logs.find((l) => l.event === 'request'), 3000, 'the request line');
  expect(line.resumed).toMatchObject({ from: 'a', to: 'b', result: 'ok' });
  // b reported its own usage: charged that, and only to b's budgets.
  expect(await spentOn(proxy, 'provider:p_b')).toBe(5007);
  // a reported none before it broke: charged its own part, estimated (the prompt and the two words it delivered), not b's 5,007.
  const first = await spentOn(proxy, 'provider:p_a');
  expect(first).toBeGreaterThan(0);
  expect(first).toBeLessThan(100);
  expect(await spentOn(proxy, 'route:chat')).toBe(first + 5007);
});
