import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { tokenCounter } from '../../../src/tokens/count.js';
import { anthropicEvent, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import type { Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, readAll, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, errorEvents, type RunningProxy, sseData, sseText } from '../../helpers/proxy.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

/**
 * After commit a stream is bounded by idle_ms, not total_ms: a slow model that keeps flowing
 * completes whatever its length, a stalled one still ends at idle_ms. A stream that ends early
 * (stall, break, client gone) is recorded with the tokens the client received, counted and
 * marked estimated, in the usage file and in llm_tokens_total.
 */

const h = useHarness();
const tempDir = useTempDirs();

const WORDS = Array.from({ length: 15 }, (_, i) => ` word${i}`);
const ESTIMATED = 'estimated:o200k_base';

/** An OpenAI-type upstream (llama-server's shape, no usage chunk) sending one token every `everyMs`. */
function slowTokens(words: readonly string[], everyMs: number, sent: string[] = []): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const word of words) {
      await ctx.wait(everyMs);
      if (ctx.isClosed()) return;
      ctx.content(word);
      sent.push(word);
    }
    ctx.finish();
    ctx.done();
  };
}

/** Three tokens, then silence until the proxy hangs up. */
const stallAfterThree: Script = async (ctx) => {
  ctx.startStream();
  ctx.role();
  for (const word of WORDS.slice(0, 3)) ctx.content(word);
  await Promise.race([ctx.closed, ctx.wait(10_000)]);
};

/** Three tokens, then the socket breaks. */
const breakAfterThree: Script = async (ctx) => {
  ctx.startStream();
  ctx.role();
  for (const word of WORDS.slice(0, 3)) ctx.content(word);
  await ctx.wait(50);
  ctx.destroy();
};

async function proxyWith(
  script: Script,
  timeouts: Record<string, number>,
  type: 'openai' | 'anthropic' = 'openai',
): Promise<{ proxy: RunningProxy; db: string }> {
  const db = join(tempDir(), 'usage.db');
  const upstream = await h.fake();
  upstream.always(script);
  const url = type === 'anthropic' ? `http://127.0.0.1:${upstream.port}` : upstream.url;
  const proxy = await h.proxy({ tiers: [{ name: 'local', url, type, timeouts, retry: { attempts: 1 } }], top: { usage: { path: db } } });
  return { proxy, db };
}

/** The usage file's rows once `n` requests are in it. */
function rowsOf(proxy: RunningProxy, db: string, n = 1): Promise<Array<Record<string, unknown>>> {
  return waitFor(
    async () => {
      await proxy.server.usage.flush();
      const rows = readRequests(db);
      return rows.length >= n ? rows : null;
    },
    5000,
    `${n} usage rows`,
  );
}

async function tokensOf(text: string): Promise<number> {
  return (await tokenCounter()).count(text);
}

async function completionMetric(proxy: RunningProxy): Promise<number | undefined> {
  return metric((await fetchMetrics(proxy)).samples, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'completion' });
}

describe('a committed stream outlives total_ms while it flows', () => {
  it('chat → openai: 15 tokens, one every 100 ms, past total_ms 500, arrive whole through the OpenAI SDK', async () => {
    const { proxy, db } = await proxyWith(slowTokens(WORDS, 100), { total_ms: 500, idle_ms: 1000 });
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const started = performance.now();
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'count' }] });
    let text = '';
    let finish: string | null = null;
    for await (const part of stream) {
      text += part.choices[0]?.delta?.content ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(WORDS.join(''));
    expect(finish).toBe('stop');
    // Fifteen waits of at least 100 ms: three times total_ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1400);

    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ outcome: 'ok', stream: 1, completion_tokens: await tokensOf(WORDS.join('')), token_source: ESTIMATED });
    expect(row.completion_tokens as number).toBeGreaterThan(0);
    expect(await completionMetric(proxy)).toBe(row.completion_tokens);
  });

  it('messages client → openai upstream (translated): the Anthropic SDK gets the whole slow answer past total_ms', async () => {
    const { proxy, db } = await proxyWith(slowTokens(WORDS, 100), { total_ms: 500, idle_ms: 1000 });
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => (block.type === 'text' ? block.text : `<${block.type}>`)).join('')).toBe(WORDS.join(''));
    expect(message.stop_reason).toBe('end_turn');

    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ protocol: 'messages', outcome: 'ok', completion_tokens: await tokensOf(WORDS.join('')), token_source: ESTIMATED });
  });

  it('the opt-in stream_max_ms does cut a flowing stream: one error event; the row counts what was delivered', async () => {
    const { proxy, db } = await proxyWith(slowTokens(WORDS, 100), { ttft_ms: 500, idle_ms: 1000, stream_max_ms: 700 });
    const started = performance.now();
    const res = await chat(proxy, { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(performance.now() - started).toBeGreaterThanOrEqual(650);
    const delivered = sseText(text);
    expect(delivered.length).toBeGreaterThan(0);
    expect(WORDS.join('').startsWith(delivered) && delivered !== WORDS.join('')).toBe(true);
    expect(errorEvents(text).map((e) => e.error)).toEqual([
      expect.objectContaining({ code: 'stream_interrupted', message: 'llm-route: stream not complete within stream_max_ms (700 ms)' }),
    ]);
    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ outcome: 'interrupted', completion_tokens: await tokensOf(delivered), token_source: ESTIMATED });
  });

  it('total_ms still bounds the wait for the first token', async () => {
    const late: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.wait(800);
      ctx.content('late');
      ctx.finish();
      ctx.done();
    };
    const { proxy, db } = await proxyWith(late, { total_ms: 300, ttft_ms: 5000 });
    const res = await chat(proxy, { stream: true });
    expect(res.status).toBe(504);
    expect(await res.text()).toMatch(/local#1: total_timeout/);
    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ tier: null, completion_tokens: 0, token_source: null });
  });
});

describe('a stream that ends early is billed for what the client received', () => {
  it('chat → openai: a stall past idle_ms ends with stream_interrupted; the row counts the 3 delivered tokens, estimated', async () => {
    const { proxy, db } = await proxyWith(stallAfterThree, { idle_ms: 300, total_ms: 60_000 });
    const res = await chat(proxy, { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    const delivered = WORDS.slice(0, 3).join('');
    expect(sseText(text)).toBe(delivered);
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ code: 'stream_interrupted', message: 'llm-route: no content within 300 ms' });
    expect(sseData(text)).not.toContain('[DONE]');

    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ outcome: 'interrupted', completion_tokens: await tokensOf(delivered), token_source: ESTIMATED });
    expect(row.completion_tokens as number).toBeGreaterThan(0);
    expect(row.prompt_tokens as number).toBeGreaterThan(0);
    expect(await completionMetric(proxy)).toBe(row.completion_tokens);
  });

  it('messages client → openai upstream (translated): a stall past idle_ms is an error the Anthropic SDK raises; the row counts the delivered text', async () => {
    const { proxy, db } = await proxyWith(stallAfterThree, { idle_ms: 300, total_ms: 60_000 });
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] });
    let received = '';
    stream.on('text', (t) => (received += t));
    await expect(stream.finalMessage()).rejects.toThrow(/no content within 300 ms/);
    expect(received).toBe(WORDS.slice(0, 3).join(''));

    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ protocol: 'messages', outcome: 'interrupted', completion_tokens: await tokensOf(received), token_source: ESTIMATED });
    expect(row.completion_tokens as number).toBeGreaterThan(0);
  });

  it('chat → openai: an upstream break after 3 tokens records them', async () => {
    const { proxy, db } = await proxyWith(breakAfterThree, { idle_ms: 5000 });
    const { text } = await readAll(await chat(proxy, { stream: true }));
    expect(errorEvents(text)[0].error.code).toBe('stream_interrupted');
    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ outcome: 'interrupted', completion_tokens: await tokensOf(WORDS.slice(0, 3).join('')), token_source: ESTIMATED });
  });

  it('chat → openai: a client that leaves mid-stream; the row counts what was relayed before it left', async () => {
    const sent: string[] = [];
    const { proxy, db } = await proxyWith(slowTokens(WORDS, 100, sent), { idle_ms: 5000 });
    const leave = new AbortController();
    const res = await chat(proxy, { stream: true }, { signal: leave.signal });
    const reader = res.body!.getReader();
    let received = '';
    const decoder = new TextDecoder();
    while (!sseText(received).includes(WORDS[4])) received += decoder.decode((await reader.read()).value);
    leave.abort();

    const [row] = await rowsOf(proxy, db);
    expect(row).toMatchObject({ outcome: 'client_abort', token_source: ESTIMATED });
    // At least what the client saw, at most what the upstream sent before the proxy hung up.
    expect(row.completion_tokens as number).toBeGreaterThanOrEqual(await tokensOf(sseText(received)));
    expect(row.completion_tokens as number).toBeLessThanOrEqual(await tokensOf(sent.join('')));
    expect(sent.length).toBeLessThan(WORDS.length);
  });

  it("messages → anthropic (relayed): a break keeps the upstream's prompt count and counts the delivered text", async () => {
    const broken: Script = async (ctx) => {
      startAnthropicStream(ctx, { input_tokens: 25, cache_read_input_tokens: 5, output_tokens: 1 });
      anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      for (const text of WORDS.slice(0, 4)) anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
      await ctx.wait(50);
      ctx.destroy();
    };
    const { proxy, db } = await proxyWith(broken, { idle_ms: 5000 }, 'anthropic');
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] });
    let received = '';
    stream.on('text', (t) => (received += t));
    await expect(stream.finalMessage()).rejects.toThrow(/upstream connection broke/);
    expect(received).toBe(WORDS.slice(0, 4).join(''));

    const [row] = await rowsOf(proxy, db);
    // Anthropic's prompt figure (input + cache read) holds; its output_tokens of 1 at message_start does not.
    expect(row).toMatchObject({
      protocol: 'messages',
      outcome: 'interrupted',
      prompt_tokens: 30,
      cached_tokens: 5,
      completion_tokens: await tokensOf(received),
      token_source: ESTIMATED,
    });
    expect(await completionMetric(proxy)).toBe(row.completion_tokens);
  });
});
