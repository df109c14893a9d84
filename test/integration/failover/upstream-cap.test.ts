import { describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, MAX_EVENT_BYTES } from '../../../src/proxy/stream-errors.js';
import { chunk, completion, healthyStream, type ScriptContext } from '../../helpers/fake-upstream.js';
import { anthropicEvent, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { logLine, readAll, requestLog, socketClosed, useHarness } from '../../helpers/harness.js';
import { errorEvents, sseData, sseText } from '../../helpers/proxy.js';
import { type ClientProtocolName, streamWith } from '../../helpers/resume-clients.js';

const h = useHarness();

/** Writes `total` bytes of `piece`s, waiting for the socket to drain; stops when the proxy hangs up. */
async function pour(ctx: ScriptContext, piece: string, total: number): Promise<number> {
  let written = 0;
  while (written < total && !ctx.isClosed()) {
    written += piece.length;
    if (!ctx.res.write(piece)) await Promise.race([new Promise((r) => ctx.res.once('drain', r)), ctx.closed]);
  }
  return written;
}

/**
 * How far past the cap the fake offers to write. What it has written when the proxy hangs up is
 * the cap plus whatever sat in the loopback socket buffers (several MiB each way): 4 MiB was too
 * little (the fake sometimes finished before it saw the close); 32 MiB still proves the cut.
 */
const OVERSHOOT = 32 * 1024 * 1024;

const body = (stream: boolean) => JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream });

describe('an upstream answer over 64 MiB counts as broken', () => {
  it('a whole (non-stream) answer: the next tier answers, the big one is cut off', async () => {
    const big = await h.fake();
    const small = await h.fake();
    let poured = 0;
    big.always(async (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.write('{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');
      poured = await pour(ctx, 'a'.repeat(256 * 1024), MAX_ANSWER_BYTES + OVERSHOOT);
      ctx.res.end('"}}]}');
    });
    small.always((ctx) => ctx.json(200, completion('small answer')));
    const p = await h.proxy({
      tiers: [
        { name: 'big', url: big.url },
        { name: 'small', url: small.url },
      ],
    });
    const res = await fetch(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(false) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('small answer');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect(line.tier).toBe('small');
    expect((line.attempts as Array<{ tier: string; outcome: string }>).map((a) => `${a.tier}:${a.outcome}`)).toEqual(['big:answer_too_large', 'small:ok']);
    await socketClosed(big);
    expect(poured).toBeLessThan(MAX_ANSWER_BYTES + OVERSHOOT);
  }, 30_000);

  it('a stream that passes 64 MiB before its first content: the next tier answers', async () => {
    const big = await h.fake();
    const small = await h.fake();
    big.always(async (ctx) => {
      ctx.startStream();
      await pour(ctx, `: ${'k'.repeat(64 * 1024)}\n\n`, MAX_ANSWER_BYTES + 1024 * 1024);
      ctx.content('from big');
      ctx.done();
    });
    small.always(healthyStream(['from', ' small']));
    const p = await h.proxy({
      tiers: [
        { name: 'big', url: big.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'small', url: small.url },
      ],
    });
    const res = await fetch(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(true) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('small');
    const { text, error } = await readAll(res);
    expect(error).toBeNull();
    expect(sseText(text)).toBe('from small');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0].outcome).toBe('answer_too_large');
    await socketClosed(big);
  }, 30_000);

  it('a committed stream that passes 64 MiB ends with the error event, never as a success', async () => {
    const big = await h.fake();
    big.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      const event = `data: ${JSON.stringify(chunk({ content: 'w'.repeat(32 * 1024) }))}\n\n`;
      await pour(ctx, event, MAX_ANSWER_BYTES + 1024 * 1024);
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({ tiers: [{ name: 'big', url: big.url }] });
    const res = await fetch(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(true) });
    expect(res.status).toBe(200);
    const { text, error } = await readAll(res);
    expect(error).toBeNull();
    expect(text.length).toBeGreaterThan(MAX_ANSWER_BYTES / 2);
    expect(sseData(text).at(-1)).not.toBe('[DONE]');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error.code).toBe('stream_interrupted');
    expect(errors[0].error.message).toBe('llm-route: upstream answer too large: more than 64 MiB, after the first token');
    const line = await logLine(p, res.headers.get('x-request-id'));
    expect(line.outcome).toBe('interrupted');
    expect(line.error).toBe('upstream answer too large: more than 64 MiB, after the first token');
    await socketClosed(big);
  }, 60_000);
});

describe('one stream event over 4 MiB after commit: "upstream answer too large", not a broken connection', () => {
  /** The start of one event that goes on past the cap (its end never comes; the upstream keeps its connection open). */
  const endless = 'x'.repeat(MAX_EVENT_BYTES + 64 * 1024);

  it.each<[ClientProtocolName, 'openai' | 'anthropic']>([
    ['chat', 'openai'],
    ['responses', 'openai'],
    ['messages', 'openai'],
    ['messages', 'anthropic'],
  ])("a %s client of an %s tier gets its protocol's error event with those words; the log says the same", async (protocol, type) => {
    const upstream = await h.fake();
    upstream.always(async (ctx) => {
      if (type === 'anthropic') {
        startAnthropicStream(ctx);
        anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } });
        ctx.raw(`event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${endless}`);
      } else {
        ctx.startStream();
        ctx.content('Hello');
        ctx.raw(`data: {"choices":[{"index":0,"delta":{"content":"${endless}`);
      }
      await ctx.closed;
    });
    const url = type === 'anthropic' ? `http://127.0.0.1:${upstream.port}` : upstream.url;
    const p = await h.proxy({ tiers: [{ name: 'local', url, type }] });
    const seen = await streamWith(protocol, p);
    expect(seen.text).toBe('Hello');
    expect(seen.failed).toMatch(/upstream answer too large: a stream event larger than 4 MiB, after the first token/);
    expect(seen.failed).not.toMatch(/broke/);
    const line = await requestLog(p);
    expect(line).toMatchObject({
      tier: 'local',
      outcome: 'interrupted',
      error: 'upstream answer too large: a stream event larger than 4 MiB, after the first token',
    });
    await socketClosed(upstream);
  });
});
