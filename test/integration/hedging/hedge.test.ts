import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { anthropicEvent, anthropicText, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { healthyStream, type Script, taggedChunk } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, useHarness, waitFor } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { PROTOCOLS, WORDS } from '../../helpers/resume-scripts.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';
import { join } from 'node:path';

// Hedged first tokens (docs/hedging.md): routes.<r>.hedge_ms.

const h = useHarness();
const tempDir = useTempDirs();
const FULL = WORDS.join('');

/** Request log lines, in the order the requests ended. */
const lines = (proxy: RunningProxy) => proxy.logs.filter((l) => l.event === 'request');
const nthLine = (proxy: RunningProxy, n: number) => waitFor(() => lines(proxy)[n], 3000, `request line ${n}`);

/** Headers, then no first content until llm-route hangs up; when it did is kept. */
function stalled(closedAt: number[]): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    await ctx.closed;
    closedAt.push(performance.now());
  };
}

/** First content only after `ms`, then the words slowly (the client's stream stays open a while). */
function lateStream(ms: number, tag: string, closedAt: number[] = []): Script {
  return async (ctx) => {
    let sent = false;
    void ctx.closed.then(() => sent || closedAt.push(performance.now()));
    ctx.startStream();
    await ctx.wait(ms);
    if (ctx.isClosed()) return;
    sent = true;
    for (const word of WORDS) {
      ctx.event(taggedChunk(tag, { content: word }));
      await ctx.wait(20);
    }
    ctx.event(taggedChunk(tag, {}, 'stop'));
    ctx.done();
  };
}

describe('hedged first tokens', () => {
  it("a stalled first tier: the next starts after hedge_ms, commits, and the first's socket is closed at once (every client protocol, real SDKs)", async () => {
    const a = await h.fake();
    const b = await h.fake();
    const closedAt: number[] = [];
    a.always(stalled(closedAt));
    b.always(healthyStream(WORDS, { delayMs: 30 }));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 200 },
    });
    for (const [i, protocol] of PROTOCOLS.entries()) {
      const started = performance.now();
      const seen = await streamWith(protocol, proxy);
      const ended = performance.now();
      expect(seen.failed).toBeNull();
      expect(seen.text).toBe(FULL);
      // The loser's socket closed while the winner was still streaming (9 words, 30 ms apart), far inside a's ttft.
      await waitFor(() => closedAt.length === i + 1, 3000, "a's socket to close");
      expect(closedAt[i]).toBeLessThan(ended);
      expect(closedAt[i] - started).toBeLessThan(5_000);
      // b started well after a (the proxy's own at_ms below is the exact check; these arrival times at
      // the fakes carry each connection's set-up, which a busy machine stretches by tens of ms).
      expect(b.requests[i].at - a.requests[i].at).toBeGreaterThanOrEqual(150);
      const line = await nthLine(proxy, i);
      expect(line.tier).toBe('b');
      expect(line.hedged).toEqual({ at_ms: expect.any(Number), winner: 'b', loser: 'a' });
      expect((line.hedged as { at_ms: number }).at_ms).toBeGreaterThanOrEqual(195);
      expect(line.attempts).toEqual([expect.objectContaining({ tier: 'a', outcome: 'hedge_lost' }), expect.objectContaining({ tier: 'b', outcome: 'ok' })]);
    }
    const samples = (await fetchMetrics(proxy)).samples;
    expect(metric(samples, 'llm_hedges_total', { route: 'chat', result: 'second_won' })).toBe(3);
    expect(metric(samples, 'llm_upstream_attempts_total', { route: 'chat', tier: 'a', result: 'hedge_lost' })).toBe(3);
    // Losing a race is no failure: no health penalty.
    const routes = (await (await fetch(`${proxy.origin}/admin/routes`)).json()) as {
      routes: { chat: { tiers: Array<{ name: string; state: string; health: { failures: number } }> } };
    };
    expect(routes.routes.chat.tiers[0]).toMatchObject({ name: 'a', state: 'healthy' });
  });

  it('the first tier answering before its hedge: it commits, the hedge is stopped and never reaches the client (first_won)', async () => {
    const a = await h.fake();
    const b = await h.fake();
    const bClosed: number[] = [];
    a.always(lateStream(400, 'a'));
    b.always(lateStream(5_000, 'b', bClosed));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 100 },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(FULL);
    expect([...seen.ids]).toEqual(['chatcmpl-a']);
    expect(b.requests).toHaveLength(1);
    await waitFor(() => bClosed.length === 1, 3000, "the hedge's socket to close");
    const line = await nthLine(proxy, 0);
    expect(line.hedged).toMatchObject({ winner: 'a', loser: 'b' });
    expect(line.attempts).toEqual([expect.objectContaining({ tier: 'b', outcome: 'hedge_lost' }), expect.objectContaining({ tier: 'a', outcome: 'ok' })]);
    expect(metric((await fetchMetrics(proxy)).samples, 'llm_hedges_total', { route: 'chat', result: 'first_won' })).toBe(1);
  });

  it('both deliver first content in the same moment: one commits, the client sees one stream (never a splice)', async () => {
    const a = await h.fake();
    const b = await h.fake();
    let release!: () => void;
    const both = new Promise<void>((resolve) => (release = resolve));
    const sameMoment =
      (tag: string): Script =>
      async (ctx) => {
        ctx.startStream();
        if (tag === 'b') release();
        await both;
        for (const word of WORDS) ctx.event(taggedChunk(tag, { content: word }));
        ctx.event(taggedChunk(tag, {}, 'stop'));
        ctx.done();
      };
    a.always(sameMoment('a'));
    b.always(sameMoment('b'));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 50 },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(FULL);
    expect(seen.ids.size).toBe(1);
    const line = await nthLine(proxy, 0);
    expect(line.tier).toBe([...seen.ids][0].replace('chatcmpl-', ''));
    expect((line.attempts as unknown[]).length).toBe(2);
  });

  it('the first fails while its hedge runs: the hedge is the attempt in flight, and the next hedge is timed from its start', async () => {
    const a = await h.fake();
    const b = await h.fake();
    const c = await h.fake();
    const bClosed: number[] = [];
    let aFailedAt = 0;
    a.always(async (ctx) => {
      await ctx.wait(300);
      aFailedAt = performance.now();
      ctx.error(500, 'overloaded');
    });
    b.always(stalled(bClosed));
    c.always(healthyStream(WORDS));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, retry: { attempts: 1 } },
        { name: 'b', url: b.url },
        { name: 'c', url: c.url },
      ],
      routeKeys: { hedge_ms: 100 },
    });
    const seen = await streamWith('messages', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    // At most two in flight: c started only once a had failed (b's own hedge time had passed by then).
    expect(c.requests[0].at).toBeGreaterThanOrEqual(aFailedAt);
    expect(c.requests[0].at - b.requests[0].at).toBeGreaterThanOrEqual(95);
    await waitFor(() => bClosed.length === 1, 3000, "b's socket to close");
    const line = await nthLine(proxy, 0);
    expect(line.hedged).toMatchObject({ winner: 'c', loser: 'b' });
    expect(line.attempts).toEqual([
      expect.objectContaining({ tier: 'a', outcome: 'server_error' }),
      expect.objectContaining({ tier: 'b', outcome: 'hedge_lost' }),
      expect.objectContaining({ tier: 'c', outcome: 'ok' }),
    ]);
  });

  it('a hedge that fails leaves the first alone: it still commits, with no hedge on the log line', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(lateStream(300, 'a'));
    b.always((ctx) => ctx.error(500, 'boom'));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url, retry: { attempts: 1 } },
      ],
      routeKeys: { hedge_ms: 50 },
    });
    const seen = await streamWith('responses', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    const line = await nthLine(proxy, 0);
    expect(line.tier).toBe('a');
    expect(line.hedged).toBeUndefined();
    expect(line.attempts).toEqual([expect.objectContaining({ tier: 'b', outcome: 'server_error' }), expect.objectContaining({ tier: 'a', outcome: 'ok' })]);
  });

  it("the loser's tokens are kept when its upstream reported some before it was stopped (Anthropic's message_start)", async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      startAnthropicStream(ctx, { input_tokens: 1234, output_tokens: 1 });
      anthropicEvent(ctx, 'ping', {});
      await ctx.closed;
    });
    b.always((ctx) => {
      startAnthropicStream(ctx, { input_tokens: 40, output_tokens: 1 });
      anthropicText(ctx, 0, WORDS);
      endAnthropicStream(ctx, 'end_turn', 9);
    });
    const db = join(tempDir(), 'usage.db');
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, type: 'anthropic' },
        { name: 'b', url: b.url, type: 'anthropic' },
      ],
      routeKeys: { hedge_ms: 100 },
      top: { usage: { path: db } },
    });
    const seen = await streamWith('messages', proxy);
    expect(seen.text).toBe(FULL);
    const line = await nthLine(proxy, 0);
    expect(line.loser_usage).toMatchObject({ tier: 'a', prompt_tokens: 1234 });
    expect(line.usage).toMatchObject({ prompt_tokens: 40 });
    const samples = (await fetchMetrics(proxy)).samples;
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'a', kind: 'prompt' })).toBe(1234);
    // The usage row counts both: the winner's 40 and the loser's 1234 prompt tokens.
    await proxy.server.usage.flush();
    expect(readRequests(db)[0]).toMatchObject({ tier: 'b', prompt_tokens: 1274 });
  });

  it('a hedge is opened as any attempt: a budget that cannot hold it keeps it from starting', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(lateStream(300, 'a'));
    b.always(healthyStream(WORDS));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 50 },
      top: { usage: { path: join(tempDir(), 'usage.db') }, budgets: [{ scope: 'provider:p_b', per: 'day', tokens: 5 }] },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(FULL);
    expect(b.requests).toHaveLength(0);
    const line = await nthLine(proxy, 0);
    expect(line.hedged).toBeUndefined();
    expect(line.attempts).toEqual([expect.objectContaining({ tier: 'b', outcome: 'budget' }), expect.objectContaining({ tier: 'a', outcome: 'ok' })]);
  });

  it('the route deadline bounds both: two stalled tiers end in a 504 at deadline_ms, both sockets closed', async () => {
    const a = await h.fake();
    const b = await h.fake();
    const aClosed: number[] = [];
    const bClosed: number[] = [];
    a.always(stalled(aClosed));
    b.always(stalled(bClosed));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'b', url: b.url, timeouts: { ttft_ms: 20_000 } },
      ],
      deadline_ms: 600,
      routeKeys: { hedge_ms: 100 },
    });
    const started = performance.now();
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toMatch(/504/);
    expect(performance.now() - started).toBeLessThan(5_000);
    await waitFor(() => aClosed.length === 1 && bClosed.length === 1, 3000, 'both sockets to close');
    const line = await nthLine(proxy, 0);
    expect(line.status).toBe(504);
    // Both budgets end at the deadline, on timers that fire in the same millisecond: either may be recorded first.
    expect(line.attempts).toHaveLength(2);
    expect(line.attempts).toEqual(
      expect.arrayContaining([expect.objectContaining({ tier: 'a', outcome: 'deadline' }), expect.objectContaining({ tier: 'b', outcome: 'deadline' })]),
    );
  });

  it('the client leaving while both race: both attempts on record as client_abort, the first tier on the line, both sockets closed', async () => {
    const a = await h.fake();
    const b = await h.fake();
    const aClosed: number[] = [];
    const bClosed: number[] = [];
    a.always(stalled(aClosed));
    b.always(stalled(bClosed));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'b', url: b.url, timeouts: { ttft_ms: 20_000 } },
      ],
      routeKeys: { hedge_ms: 100 },
    });
    const leave = new AbortController();
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const pending = client.chat.completions
      .create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }, { signal: leave.signal })
      .catch((e: unknown) => e);
    await waitFor(() => b.requests.length === 1, 3000, 'the hedge to start');
    leave.abort();
    expect(await pending).toBeInstanceOf(Error);
    await waitFor(() => aClosed.length === 1 && bClosed.length === 1, 3000, 'both sockets to close');
    const line = await nthLine(proxy, 0);
    expect(line).toMatchObject({ outcome: 'client_abort', tier: 'a' });
    // Both ends come from the one abort: either may be recorded first.
    expect(line.attempts).toHaveLength(2);
    expect(line.attempts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tier: 'a', outcome: 'client_abort' }),
        expect.objectContaining({ tier: 'b', outcome: 'client_abort' }),
      ]),
    );
  });

  it('non-stream requests and routes without hedge_ms never start a second tier while the first is within its budget', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      await ctx.wait(300);
      if (ctx.body.stream) return lateStream(0, 'a')(ctx);
      ctx.json(200, {
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: FULL }, finish_reason: 'stop' }],
      });
    });
    b.always(healthyStream(WORDS));
    const hedged = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 50 },
    });
    const whole = await new OpenAI({ baseURL: hedged.baseURL, apiKey: 'x', maxRetries: 0 }).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(whole.choices[0].message.content).toBe(FULL);
    const plain = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
    });
    expect((await streamWith('chat', plain)).text).toBe(FULL);
    expect(b.requests).toHaveLength(0);
  });
});
