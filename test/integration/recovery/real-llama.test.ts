import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { type RealLlama, realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';

/**
 * Mid-stream recovery against two real llama.cpp servers (scripts/real-llama/), the first
 * killed with SIGKILL mid-answer (and started again for the next case); and the learned stall
 * against the second's own pace, which must never cut it. Skipped when the llama-server build
 * is absent; both servers are this file's own, on free ports.
 */
const available = realLlamaBuilt();
let first: RealLlama | undefined;
let second: RealLlama | undefined;
beforeAll(async () => {
  if (!available) return;
  [first, second] = await Promise.all([startRealLlama(), startRealLlama()]);
}, 300_000);
afterAll(() => Promise.all([first?.stop(), second?.stop()]), 30_000);
const h = useHarness();
/** A CPU-only model on a shared machine: seconds per token at worst. */
const SLOW_MACHINE = { ttft_ms: 120_000, idle_ms: 60_000 };
const KILL_AT_CHUNK = 8;
const PARAMS = { model: 'chat', temperature: 0, seed: 7, max_tokens: 30, messages: [{ role: 'user' as const, content: 'Tell me a long story about a fox.' }] };

async function reference(port: number): Promise<string> {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'x', maxRetries: 0 });
  const answer = await client.chat.completions.create({ ...PARAMS, model: 'tiny', stream: false });
  return answer.choices[0].message.content ?? '';
}

/** Starts the server again when it is not answering (a previous case killed it). */
async function ensureRunning(llama: RealLlama): Promise<void> {
  const up = await fetch(`http://127.0.0.1:${llama.port}/health`).then(
    (r) => r.ok,
    () => false,
  );
  if (!up) await llama.restart();
}

type Client = 'chat' | 'messages';

/** The answer's text deltas as the client's SDK yields them (Chat chunks, or Messages text deltas). */
async function* textDeltas(client: Client, origin: string): AsyncGenerator<string> {
  if (client === 'chat') {
    const openai = new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'x', maxRetries: 0 });
    for await (const chunk of await openai.chat.completions.create({ ...PARAMS, stream: true })) yield chunk.choices[0]?.delta.content ?? '';
    return;
  }
  const anthropic = new Anthropic({ baseURL: origin, apiKey: 'x', maxRetries: 0 });
  const stream = anthropic.messages.stream({ model: 'chat', temperature: 0, max_tokens: PARAMS.max_tokens, messages: PARAMS.messages });
  for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') yield event.delta.text;
  await stream.finalMessage(); // raises if the stream did not complete
}

async function killedMidAnswer(
  prefillOnSecond: boolean,
  client: Client = 'chat',
): Promise<{ text: string; chunksBeforeKill: number; line: Record<string, unknown> }> {
  const [a, b] = [first!, second!];
  await ensureRunning(a);
  const proxy = await h.proxy({
    tiers: [
      { name: 'llama_a', url: a.url, model: 'tiny', retry: { attempts: 1 }, timeouts: SLOW_MACHINE },
      { name: 'llama_b', url: b.url, model: 'tiny', extra: { prefill: prefillOnSecond }, timeouts: SLOW_MACHINE },
    ],
    deadline_ms: 300_000,
    routeKeys: { on_break: 'resume' },
  });
  let text = '';
  let chunks = 0;
  let chunksBeforeKill = 0;
  for await (const delta of textDeltas(client, proxy.origin)) {
    text += delta;
    if (++chunks === KILL_AT_CHUNK) {
      chunksBeforeKill = chunks;
      void a.stop('SIGKILL');
    }
  }
  return { text, chunksBeforeKill, line: await requestLog(proxy, 10_000) };
}

describe.skipIf(!available)('mid-stream recovery with real llama-servers, the first killed -9 mid-answer', () => {
  it('continues on the second (prefill): the client gets the whole answer, the same as an unbroken one', async () => {
    const expected = await reference(second!.port);
    const { text, chunksBeforeKill, line } = await killedMidAnswer(true);
    console.log('real llama continuation:', JSON.stringify({ chunksBeforeKill, resumed: line.resumed, attempts: line.attempts, chars: text.length }));
    expect(chunksBeforeKill).toBe(KILL_AT_CHUNK);
    expect(text).toBe(expected);
    expect(line.outcome).toBe('ok');
    expect(line.resumed).toMatchObject({ from: 'llama_a', to: 'llama_b', how: 'continue', result: 'ok' });
  }, 300_000);

  it('a Messages client (translated both ways) gets the whole answer as one message', async () => {
    const expected = await reference(second!.port);
    const { text, line } = await killedMidAnswer(true, 'messages');
    console.log('real llama continuation, messages client:', JSON.stringify({ resumed: line.resumed, chars: text.length }));
    expect(text).toBe(expected);
    expect(line.resumed).toMatchObject({ how: 'continue', result: 'ok' });
  }, 300_000);

  it('replays on the second (no prefill): a deterministic replay is verified and relayed past the prefix', async () => {
    const expected = await reference(second!.port);
    const { text, line } = await killedMidAnswer(false);
    console.log('real llama replay:', JSON.stringify({ resumed: line.resumed, attempts: line.attempts, chars: text.length }));
    expect(text).toBe(expected);
    expect(line.resumed).toMatchObject({ from: 'llama_a', to: 'llama_b', how: 'replay', result: 'ok' });
  }, 300_000);
});

describe.skipIf(!available)("the learned stall against a real llama-server's own pace (CPU, shared by two streams)", () => {
  // Long enough for the pace to be known (stall.after: 16 gaps) and then judged for a while.
  const LONG = { model: 'chat', temperature: 0, seed: 3, max_tokens: 48, messages: [{ role: 'user' as const, content: 'Write a long essay about rivers.' }] };

  /** The answer's text deltas through the proxy (the SDK raises on the error event), and the gaps between them as the client saw them. */
  async function streamed(origin: string): Promise<{ deltas: number; gapsMs: number[]; finish: string | null }> {
    const openai = new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'x', maxRetries: 0, timeout: 900_000 });
    const gapsMs: number[] = [];
    let deltas = 0;
    let last = 0;
    let finish: string | null = null;
    for await (const chunk of await openai.chat.completions.create({ ...LONG, stream: true })) {
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if ((chunk.choices[0]?.delta.content ?? '') === '') continue;
      const now = performance.now();
      if (last > 0) gapsMs.push(now - last);
      last = now;
      deltas++;
    }
    return { deltas, gapsMs, finish };
  }

  it('two answers at once through a resume route, the second starting mid-way through the first: neither is cut', async () => {
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: second!.url, model: 'tiny', retry: { attempts: 1 }, timeouts: { ttft_ms: 600_000, idle_ms: 600_000 } },
        { name: 'spare', url: 'http://127.0.0.1:9/v1', model: 'tiny' },
      ],
      deadline_ms: 900_000,
      routeKeys: { on_break: 'resume' },
    });
    const one = streamed(proxy.origin);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const both = await Promise.all([one, streamed(proxy.origin)]);
    const requestLines = () => proxy.logs.filter((l) => l.event === 'request');
    const lines = await waitFor(() => (requestLines().length === 2 ? requestLines() : null), 10_000, 'both request lines');
    const sorted = both.flatMap((s) => s.gapsMs).sort((x, y) => x - y);
    console.log(
      'real llama, two answers at once through a resume route:',
      JSON.stringify({
        deltas: both.map((s) => s.deltas),
        medianGapMs: Math.round(sorted[sorted.length >> 1]),
        p90GapMs: Math.round(sorted[Math.floor(sorted.length * 0.9)]),
        maxGapMs: Math.round(sorted[sorted.length - 1]),
        resumed: lines.map((l) => l.resumed ?? null),
      }),
    );
    for (const stream of both) {
      expect(stream.finish).toBe('length');
      expect(stream.deltas).toBeGreaterThan(40);
    }
    for (const line of lines) {
      expect(line.outcome).toBe('ok');
      expect(line.resumed).toBeUndefined();
      expect(line.attempts).toMatchObject([{ tier: 'llama', outcome: 'ok' }]);
    }
  }, 1_200_000);
});
