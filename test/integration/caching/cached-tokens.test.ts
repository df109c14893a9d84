import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import type { ScriptContext } from '../../helpers/fake-upstream.js';
import { fetchMetrics, logLine, metric, readAll, useHarness } from '../../helpers/harness.js';
import { ollamaLine, startOllamaStream } from '../../helpers/ollama-upstream.js';
import { chat, type RunningProxy } from '../../helpers/proxy.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

/**
 * The prompt tokens a server read from its KV cache, from every server that reports them, in
 * its own words: llama.cpp (`prompt_tokens_details.cached_tokens`, and `timings.cache_n` in
 * builds without the former), vLLM (`prompt_tokens_details`, with --enable-prompt-tokens-details),
 * Anthropic-shaped `cache_read_input_tokens` (llama.cpp's own /v1/messages), Ollama's
 * `prompt_eval_cached_count`. They reach the usage row, the log line, the metric, and the client.
 */

const h = useHarness();
const tempDir = useTempDirs();

const cachedMetric = async (proxy: RunningProxy, tier: string): Promise<number | undefined> =>
  metric((await fetchMetrics(proxy)).samples, 'llm_cached_prompt_tokens_total', { route: 'chat', tier });

const anthropicClient = (proxy: RunningProxy): Anthropic => new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });

/** Sends a chat request and reads its answer; the request's id (the x-request-id llm-route answers with). */
async function send(proxy: RunningProxy, body: Record<string, unknown>): Promise<string> {
  const res = await chat(proxy, body);
  expect(res.status).toBe(200);
  await readAll(res);
  return res.headers.get('x-request-id') ?? '';
}

const SYSTEM = 'You are a careful assistant. '.repeat(40);
const turn = (n: number) => ({
  messages: [
    { role: 'system', content: SYSTEM },
    ...Array.from({ length: n }, (_, i) => [
      { role: 'user', content: `question ${i}` },
      { role: 'assistant', content: `answer ${i}` },
    ]).flat(),
    { role: 'user', content: `question ${n}` },
  ],
});

describe('cached prompt tokens', () => {
  it("llama.cpp's, relayed and streamed: in the usage row (cache reported), the log line and llm_cached_prompt_tokens_total", async () => {
    const db = join(tempDir(), 'usage.db');
    const llama = await FakeLlamaServer.start({ closeAfterStream: 0 });
    h.defer(() => llama.close());
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: llama.url }], top: { usage: { path: db } } });
    const first = await send(proxy, { ...turn(0), stream: true });
    const second = await send(proxy, { ...turn(1), stream: true });
    expect((await logLine(proxy, first)).usage).toMatchObject({ cached_tokens: 0 });
    const cached = ((await logLine(proxy, second)).usage as { cached_tokens: number; prompt_tokens: number }).cached_tokens;
    expect(cached).toBeGreaterThan(250); // the system prompt and the first exchange
    expect(await cachedMetric(proxy, 'local')).toBe(cached);
    await proxy.server.usage.flush();
    const rows = readRequests(db);
    expect(rows.map((r) => [r.cached_tokens, r.cache_reported])).toEqual([
      [0, 1],
      [cached, 1],
    ]);
  });

  it('llama.cpp builds without prompt_tokens_details: from `timings.cache_n`, in a stream and in a whole answer, relayed or translated', async () => {
    const llama = await FakeLlamaServer.start({ closeAfterStream: 0, noCacheDetails: true });
    h.defer(() => llama.close());
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: llama.url }] });
    await send(proxy, turn(0));
    const whole = await send(proxy, turn(1));
    const streamed = await send(proxy, { ...turn(2), stream: true });
    const wholeUsage = (await logLine(proxy, whole)).usage as Record<string, number>;
    const streamUsage = (await logLine(proxy, streamed)).usage as Record<string, number>;
    expect(wholeUsage.cached_tokens).toBeGreaterThan(250);
    expect(streamUsage.cached_tokens).toBeGreaterThan(wholeUsage.cached_tokens);
    // Translated for a Messages client: the cache read reaches it as Anthropic says it.
    const message = await anthropicClient(proxy).messages.create({
      model: 'chat',
      max_tokens: 20,
      system: SYSTEM,
      messages: [
        { role: 'user', content: 'question 0' },
        { role: 'assistant', content: 'answer 0' },
        { role: 'user', content: 'question 1' },
      ],
    });
    expect(message.usage.cache_read_input_tokens).toBeGreaterThan(250);
    expect(message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)).toBe(
      Math.ceil((SYSTEM.length + 'question 0\nanswer 0\nquestion 1'.length + 1) / 4),
    );
  });

  it("vLLM's stream (with --enable-prompt-tokens-details); without the flag it says nothing, so no series and no cached figure", async () => {
    const vllm = await h.fake();
    const vllmStream = (details: unknown) => (ctx: ScriptContext) => {
      ctx.startStream();
      const base = { id: 'chatcmpl-b2c5', object: 'chat.completion.chunk', created: 1762000000, model: 'Qwen/Qwen3-8B' };
      ctx.event({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
      ctx.event({ ...base, choices: [{ index: 0, delta: { content: 'Hi' }, logprobs: null, finish_reason: null }] });
      ctx.event({ ...base, choices: [{ index: 0, delta: { content: '' }, logprobs: null, finish_reason: 'stop', stop_reason: null }] });
      ctx.event({ ...base, choices: [], usage: { prompt_tokens: 3012, total_tokens: 3014, completion_tokens: 2, prompt_tokens_details: details } });
      ctx.done();
    };
    vllm.next(vllmStream({ cached_tokens: 2992 }), vllmStream(null));
    const proxy = await h.proxy({ tiers: [{ name: 'vllm', url: vllm.url }] });
    const flagged = await send(proxy, { stream: true });
    expect((await logLine(proxy, flagged)).usage).toEqual({ prompt_tokens: 3012, completion_tokens: 2, cached_tokens: 2992 });
    const plain = await send(proxy, { stream: true });
    expect((await logLine(proxy, plain)).usage).toEqual({ prompt_tokens: 3012, completion_tokens: 2 });
    expect(await cachedMetric(proxy, 'vllm')).toBe(2992);
  });

  it("Anthropic-shaped cache_read_input_tokens (llama.cpp's own /v1/messages, relayed); 0 still counts as reported", async () => {
    const imitation = await h.fake();
    const answer = (read: number) => (ctx: ScriptContext) =>
      ctx.json(200, {
        id: 'chatcmpl-O38zXAvNVpEqW3XwowMg5opgSGf5W9Og',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        model: 'tiny',
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { cache_read_input_tokens: read, input_tokens: 2900 - read, output_tokens: 3 },
      });
    imitation.next(answer(0), answer(2854));
    const proxy = await h.proxy({ tiers: [{ name: 'llama', url: imitation.url, provider: { passthrough: ['messages'] } }] });
    const client = anthropicClient(proxy);
    const one = await client.messages.create({ model: 'chat', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] });
    const two = await client.messages.create({ model: 'chat', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] });
    expect([one.usage.cache_read_input_tokens, two.usage.cache_read_input_tokens]).toEqual([0, 2854]);
    const lines = proxy.logs.filter((l) => l.event === 'request').map((l) => l.usage);
    expect(lines).toEqual([
      { prompt_tokens: 2900, completion_tokens: 3, cached_tokens: 0 },
      { prompt_tokens: 2900, completion_tokens: 3, cached_tokens: 2854 },
    ]);
    const samples = (await fetchMetrics(proxy)).samples;
    expect(metric(samples, 'llm_cached_prompt_tokens_total', { route: 'chat', tier: 'llama' })).toBe(2854);
    expect(metric(samples, 'llm_tokens_total', { route: 'chat', tier: 'llama', kind: 'prompt' })).toBe(5800);
  });

  it("Ollama's prompt_eval_cached_count on its final line; an Ollama that does not send it reports nothing cached", async () => {
    const ollama = await h.fake();
    const finalLine = (extra: Record<string, number>) => (ctx: ScriptContext) => {
      startOllamaStream(ctx);
      ollamaLine(ctx, { content: 'Hi' });
      ollamaLine(ctx, { content: '' }, { done_reason: 'stop', done: true, total_duration: 912000000, prompt_eval_count: 2900, eval_count: 1, ...extra });
      ctx.res.end();
    };
    ollama.next(finalLine({ prompt_eval_cached_count: 2880 }), finalLine({}));
    const proxy = await h.proxy({ tiers: [{ name: 'ollama', url: ollama.url.replace(/\/v1$/, ''), type: 'ollama' }] });
    const newer = await send(proxy, { stream: true });
    const older = await send(proxy, { stream: true });
    expect((await logLine(proxy, newer)).usage).toEqual({ prompt_tokens: 2900, completion_tokens: 1, cached_tokens: 2880 });
    expect((await logLine(proxy, older)).usage).toEqual({ prompt_tokens: 2900, completion_tokens: 1 });
    expect(await cachedMetric(proxy, 'ollama')).toBe(2880);
  });
});
