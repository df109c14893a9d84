import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { anthropicError, anthropicEvent, anthropicTextStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { chunk, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { breakAfter, FULL, lastMessage, resumeRoute as resumeOn, WORDS } from '../../helpers/resume-scripts.js';
import { readAttempts, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();
const resumeRoute = (first: Script, second: Script, opts?: Parameters<typeof resumeOn>[3]) => resumeOn(h, first, second, opts);

describe('mid-stream recovery: stalls, the deadline, the same tier', () => {
  it('a stall past idle_ms is recovered like a break', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('The ');
      await ctx.closed; // silent until llm-route gives up on it
    });
    b.always(healthyStream(WORDS.slice(1)));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { idle_ms: 300 } },
        { name: 'b', url: b.url },
      ],
      routeKeys: { on_break: 'resume' },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(FULL);
    expect((await requestLog(proxy)).resumed).toMatchObject({ from: 'a', to: 'b', how: 'continue', why: 'idle', result: 'ok' });
  });

  it('with no other tier left, the same tier is asked again when its retry rules allow one', async () => {
    const a = await h.fake();
    a.next(breakAfter(2)).always(healthyStream(WORDS.slice(2)));
    const proxy = await h.proxy({ tiers: [{ name: 'a', url: a.url, retry: { attempts: 2 } }], routeKeys: { on_break: 'resume' } });
    const seen = await streamWith('chat', proxy);
    expect(seen.text).toBe(FULL);
    expect(a.requests).toHaveLength(2);
    const line = await requestLog(proxy);
    expect(line.resumed).toMatchObject({ from: 'a', to: 'a', result: 'ok' });
    expect(line.attempts).toEqual([
      expect.objectContaining({ tier: 'a', attempt: 1, outcome: 'ok' }),
      expect.objectContaining({ tier: 'a', attempt: 2, outcome: 'ok' }),
    ]);
  });

  it('the recovery counts against the route deadline: past it, the error event', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('The ');
      await ctx.wait(700);
      ctx.destroy();
    });
    b.always(healthyStream(WORDS.slice(1)));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      deadline_ms: 500,
      routeKeys: { on_break: 'resume' },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).not.toBeNull();
    expect(b.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.resumed).toMatchObject({ result: 'failed' });
    expect(line.attempts).toContainEqual(expect.objectContaining({ tier: 'b', outcome: 'deadline' }));
  });

  it('the usage row says how the stream was resumed; a request that did not break says nothing', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.next(breakAfter(2)).always(healthyStream(WORDS));
    b.always(healthyStream(WORDS.slice(2)));
    const db = join(tempDir(), 'usage.db');
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { on_break: 'resume' },
      top: { usage: { path: db } },
    });
    expect((await streamWith('chat', proxy)).text).toBe(FULL);
    expect((await streamWith('chat', proxy)).text).toBe(FULL);
    await proxy.server.usage.flush();
    const rows = readRequests(db);
    expect(rows.map((r) => r.resumed)).toEqual(['continue:ok', null]);
    expect(rows[0]).toMatchObject({ tier: 'a', outcome: 'ok', failover: 1 });
    expect(
      readAttempts(db)
        .filter((r) => r.request_id === rows[0].id)
        .map((r) => `${r.tier}:${r.outcome}`),
    ).toEqual(['a:ok', 'b:ok']);
  });

  it("a recovery that fails ends with the error event, its upstream's words redacted of the key", async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(breakAfter(2));
    b.always((ctx) => ctx.error(401, 'Incorrect API key provided: sk-proj-secret-key-0123456789'));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url, api_key: 'sk-proj-secret-key-0123456789' },
      ],
      routeKeys: { on_break: 'resume' },
    });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toMatch(/recovery on tier b failed/);
    expect(seen.failed).not.toContain('sk-proj-secret');
    const line = await requestLog(proxy);
    expect(JSON.stringify(line)).not.toContain('sk-proj-secret');
    expect(line.resumed).toMatchObject({ result: 'failed' });
  });

  it('a break inside a reasoning block ends with the error event, no recovery', async () => {
    const { b, proxy } = await resumeRoute(async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', reasoning_content: 'Let me think' }));
      ctx.event(chunk({ reasoning_content: ' about it' }));
      await ctx.wait(30);
      ctx.destroy();
    }, healthyStream(WORDS));
    const seen = await streamWith('messages', proxy);
    expect(seen.failed).not.toBeNull();
    expect(b.requests).toHaveLength(0);
    expect((await requestLog(proxy)).resumed).toBeUndefined();
  });

  it("a client that leaves during the recovery aborts the recovery's upstream request", async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(breakAfter(2));
    b.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('fox ');
      await ctx.closed;
    });
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url },
        { name: 'b', url: b.url },
      ],
      routeKeys: { on_break: 'resume' },
    });
    const controller = new AbortController();
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: controller.signal,
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('fox')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await waitFor(() => b.socketClosedAt.size > 0, 3000, 'the recovery upstream closed');
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('client_abort');
    expect(line.resumed).toMatchObject({ to: 'b', how: 'continue' });
  });

  it('an unknown key under resume is a config error', async () => {
    await expect(
      h.proxy({ tiers: [{ name: 'a', url: 'http://127.0.0.1:1/v1' }], routeKeys: { on_break: 'resume', resume: { max: 1, tries: 2 } } }),
    ).rejects.toThrow(/tries/);
  });
});

describe('mid-stream recovery between Anthropic tiers (a Messages client: rendered, not relayed, on a resume route)', () => {
  const anthropicBreak: Script = async (ctx) => {
    startAnthropicStream(ctx, { input_tokens: 25, output_tokens: 1 }, 'msg_first');
    anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (const text of WORDS.slice(0, 3)) anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
    await ctx.wait(30);
    ctx.destroy();
  };

  async function claudePair(second: Script, prefill?: boolean) {
    const a = await h.fake();
    const b = await h.fake();
    a.always(anthropicBreak);
    b.always(second);
    const proxy = await h.proxy({
      tiers: [
        { name: 'claude_a', url: `http://127.0.0.1:${a.port}`, type: 'anthropic', retry: { attempts: 1 } },
        { name: 'claude_b', url: `http://127.0.0.1:${b.port}`, type: 'anthropic', ...(prefill === undefined ? {} : { extra: { prefill } }) },
      ],
      routeKeys: { on_break: 'resume' },
    });
    return { b, proxy };
  }

  it('a tier that rejects the assistant prefill (400, as current Claude models do) is asked the plain request: the replay is seamless', async () => {
    const { b, proxy } = await claudePair(async (ctx) => {
      if (ctx.index === 0)
        return anthropicError(
          ctx,
          400,
          'invalid_request_error',
          'This model does not support assistant message prefill. The conversation must end with a user message.',
        );
      return anthropicTextStream(['The quick brown ', 'fox jumps over the lazy dog.'])(ctx);
    }, true);
    const seen = await streamWith('messages', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.finalText).toBe(FULL);
    expect(seen.ids.size).toBe(1);
    expect(seen.indexes).toEqual(new Set(['0']));
    expect(lastMessage(b.requests[0].body)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The quick brown ' }] });
    expect((lastMessage(b.requests[1].body) as { role: string }).role).toBe('user');
    expect((await requestLog(proxy)).resumed).toEqual({ from: 'claude_a', to: 'claude_b', how: 'replay', why: 'break', at_chars: 16, result: 'ok' });
  });

  it('an anthropic tier replays by default (prefill: false): one request, no prefill sent', async () => {
    const { b, proxy } = await claudePair(anthropicTextStream(WORDS));
    const seen = await streamWith('messages', proxy);
    expect(seen.finalText).toBe(FULL);
    expect(b.requests).toHaveLength(1);
    expect((lastMessage(b.requests[0].body) as { role: string }).role).toBe('user');
  });
});
