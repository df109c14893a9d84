import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { continuesOrReplays, SIXTY, SIXTY_TEXT, stallsAfter, type UpstreamWire } from '../../helpers/cadence-scripts.js';
import { chunk, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, socketClosed, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { streamWith } from '../../helpers/resume-clients.js';

// docs/recovery.md, "A stall judged by the stream's own pace": on a resume route a committed
// stream silent far longer than its own pace is recovered in seconds, not after idle_ms.
const h = useHarness();

/** Two tiers on a resume route: `first` answers, `second` recovers. */
async function resumeRoute(first: Script, second: Script, opts: { wire?: UpstreamWire; onBreak?: 'error' | 'resume'; idleMs?: number } = {}) {
  const a = await h.fake();
  const b = await h.fake();
  a.next(first).always(healthyStream(['fine']));
  b.always(second);
  const type = opts.wire ?? 'openai';
  const timeouts = opts.idleMs ? { idle_ms: opts.idleMs } : undefined;
  const proxy = await h.proxy({
    tiers: [
      { name: 'a', url: a.url, type, retry: { attempts: 1 }, ...(timeouts ? { timeouts } : {}) },
      { name: 'b', url: b.url, type, retry: { attempts: 1 } },
    ],
    routeKeys: { on_break: opts.onBreak ?? 'resume' },
  });
  return { a, b, proxy };
}

/** A Chat client as a careful benchmark's: stream, usage asked for, the text gathered, the time taken. */
async function timedChat(proxy: RunningProxy): Promise<{ text: string; ms: number; error: string | null }> {
  const started = performance.now();
  const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0, timeout: 70_000 });
  let text = '';
  try {
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Explain in sixty words.' }],
    });
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    return { text, ms: performance.now() - started, error: null };
  } catch (err) {
    return { text, ms: performance.now() - started, error: (err as Error).message };
  }
}

describe('a stream that stalls with its socket open', () => {
  it('20 tokens 15 ms apart, then 30 s of silence: recovered after stall.floor_ms (2 s), the whole answer well inside 12 s', async () => {
    const { a, b, proxy } = await resumeRoute(stallsAfter(SIXTY, 20, 15, { forMs: 30_000 }), continuesOrReplays(SIXTY, { gapMs: 15 }));
    const seen = await timedChat(proxy);
    console.log('stalled stream recovered:', JSON.stringify({ ms: Math.round(seen.ms), words: seen.text.split(' ').length }));
    expect(seen.error).toBeNull();
    expect(seen.text).toBe(SIXTY_TEXT);
    expect(seen.ms).toBeGreaterThan(2_000);
    expect(seen.ms).toBeLessThan(12_000);
    // The stalled upstream was cut, and the recovery continued the delivered text.
    await socketClosed(a);
    const delivered = SIXTY.slice(0, 20).join('');
    expect(b.requests[0].body.messages).toContainEqual({ role: 'assistant', content: delivered });
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('ok');
    expect(line.resumed).toEqual({ from: 'a', to: 'b', how: 'continue', why: 'stall_learned', at_chars: delivered.length, result: 'ok' });
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_stream_resumes_total', { route: 'chat', how: 'continue', result: 'ok', why: 'stall_learned' })).toBe(1);
    // …and the route stays healthy: the next request is answered by the first tier.
    expect((await timedChat(proxy)).text).toBe('fine');
  }, 30_000);

  it.each<UpstreamWire>(['openai', 'anthropic', 'ollama'])(
    '%s upstream: keep-alives without a word are stalled all the same',
    async (wire) => {
      const { b, proxy } = await resumeRoute(stallsAfter(SIXTY, 20, 15, { wire, keepAliveMs: 400 }), continuesOrReplays(SIXTY, { wire }), { wire });
      const started = performance.now();
      const seen = await streamWith('chat', proxy);
      const ms = performance.now() - started;
      expect(seen.failed).toBeNull();
      expect(seen.text).toBe(SIXTY_TEXT);
      expect(ms).toBeLessThan(12_000);
      expect(b.requests).toHaveLength(1);
      expect((await requestLog(proxy)).resumed).toMatchObject({ from: 'a', to: 'b', why: 'stall_learned', result: 'ok' });
    },
    30_000,
  );

  it('with too few gaps to know its pace (3 words), idle_ms is the limit: recovered with why idle', async () => {
    const { proxy } = await resumeRoute(stallsAfter(SIXTY, 3, 15, { keepAliveMs: 400 }), continuesOrReplays(SIXTY), { idleMs: 3_000 });
    const started = performance.now();
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(SIXTY_TEXT);
    expect(performance.now() - started).toBeGreaterThan(3_000);
    expect((await requestLog(proxy)).resumed).toMatchObject({ why: 'idle', result: 'ok' });
  }, 30_000);
});

describe('a guess never cuts a stream nothing could continue', () => {
  it('on_break: error: the same stall waits for idle_ms and ends with the error event; no other tier is asked', async () => {
    const { b, proxy } = await resumeRoute(stallsAfter(SIXTY, 20, 15, { keepAliveMs: 400 }), continuesOrReplays(SIXTY), { onBreak: 'error', idleMs: 4_000 });
    const seen = await timedChat(proxy);
    expect(seen.error).toMatch(/no content within 4000 ms/);
    expect(seen.ms).toBeGreaterThan(4_000);
    expect(seen.text).toBe(SIXTY.slice(0, 20).join(''));
    expect(b.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.resumed).toBeUndefined();
  }, 30_000);

  it("inside a tool call's arguments: not cut by the learned stall; idle_ms ends it with the error event", async () => {
    const toolCall: Script = async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'write', arguments: '' } }] }));
      for (let i = 0; i < 24; i++) {
        ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: i === 0 ? '{"text":"' : 'xy' } }] }));
        await ctx.wait(15);
      }
      await ctx.closed;
    };
    const { b, proxy } = await resumeRoute(toolCall, continuesOrReplays(SIXTY), { idleMs: 4_000 });
    const started = performance.now();
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toMatch(/no content within 4000 ms/);
    expect(performance.now() - started).toBeGreaterThan(4_000);
    expect(b.requests).toHaveLength(0);
    expect((await requestLog(proxy)).resumed).toBeUndefined();
  }, 30_000);

  it('after its finish (the terminator late): not cut by the learned stall, and nothing continues it', async () => {
    const finishedThenSilent: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      for (const word of SIXTY.slice(0, 20)) {
        ctx.content(word);
        await ctx.wait(15);
      }
      ctx.finish();
      await ctx.closed;
    };
    const { b, proxy } = await resumeRoute(finishedThenSilent, continuesOrReplays(SIXTY), { idleMs: 4_000 });
    const started = performance.now();
    await streamWith('chat', proxy);
    expect(performance.now() - started).toBeGreaterThan(4_000);
    expect(b.requests).toHaveLength(0);
    expect((await requestLog(proxy)).resumed).toBeUndefined();
  }, 30_000);
});
