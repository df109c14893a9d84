import { Ollama } from 'ollama';
import { describe, expect, it } from 'vitest';
import { healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, useHarness } from '../../helpers/harness.js';
import { ollamaDone, ollamaLine, startOllamaStream } from '../../helpers/ollama-upstream.js';
import { breakAfter, FULL, lastMessage, resumeRoute, taggedStream, WORDS } from '../../helpers/resume-scripts.js';

/**
 * Mid-stream recovery (`on_break: resume`) and hedged first tokens for a client on Ollama's API:
 * a break after the first line is mended by the next tier, and ollama-js sees one stream —
 * rendered from the start when translated, a byte relay carried on when the tiers speak Ollama
 * themselves; a stalled first tier is raced by the next after hedge_ms.
 */
const h = useHarness();

async function streamed(origin: string): Promise<{ text: string; models: Set<string>; done: boolean; failed: string | null }> {
  const seen = { text: '', models: new Set<string>(), done: false, failed: null as string | null };
  try {
    const stream = await new Ollama({ host: origin }).chat({ model: 'chat', messages: [{ role: 'user', content: 'write a sentence' }], stream: true });
    for await (const part of stream) {
      seen.models.add(part.model);
      seen.text += part.message.content;
      if (part.done) seen.done = true;
    }
  } catch (error) {
    seen.failed = (error as Error).message;
  }
  return seen;
}

/** An Ollama tier's stream of `words` that breaks after them (`broken`), or ends with its done line. */
function ollamaWords(words: string[], broken: boolean): Script {
  return async (ctx) => {
    startOllamaStream(ctx);
    for (const content of words) {
      ollamaLine(ctx, { content });
      await ctx.wait(5);
    }
    if (!broken) return ollamaDone(ctx, 20, words.length);
    await ctx.wait(30);
    ctx.destroy();
  };
}

describe('mid-stream recovery, Ollama client', () => {
  it('translated (Chat tiers): the delivered text goes to the next tier as the assistant’s start, the rest arrives in the same stream', async () => {
    const { b, proxy } = await resumeRoute(h, breakAfter(4), taggedStream(WORDS.slice(4), 'second'));
    const seen = await streamed(proxy.origin);
    // One message to the end, under the model that began it.
    expect(seen).toEqual({ text: FULL, models: new Set(['a-model']), done: true, failed: null });
    expect(lastMessage(b.requests[0].body)).toEqual({ role: 'assistant', content: 'The quick brown fox ' });
    expect((await requestLog(proxy)).resumed).toEqual({ from: 'a', to: 'b', how: 'continue', why: 'break', at_chars: 20, result: 'ok' });
  });

  it('relayed (Ollama tiers): the first tier’s lines go out as their bytes, the recovery carries on under the model they named', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(ollamaWords(WORDS.slice(0, 4), true));
    b.always(ollamaWords(WORDS.slice(4), false));
    const tier = (name: string, port: number) => ({
      name,
      url: `http://127.0.0.1:${port}`,
      type: 'ollama' as const,
      model: 'qwen2.5:7b',
      retry: { attempts: 1 },
    });
    const proxy = await h.proxy({ tiers: [tier('a', a.port), tier('b', b.port)], routeKeys: { on_break: 'resume' } });
    const seen = await streamed(proxy.origin);
    expect(seen).toEqual({ text: FULL, models: new Set(['qwen2.5:7b']), done: true, failed: null });
    // The continuation is llm-route's own request: Ollama's /api/chat with the delivered text as the assistant's start.
    expect(b.requests[0].url).toBe('/api/chat');
    expect(lastMessage(b.requests[0].body)).toEqual({ role: 'assistant', content: 'The quick brown fox ' });
    expect((await requestLog(proxy)).resumed).toMatchObject({ from: 'a', to: 'b', how: 'continue', result: 'ok' });
  });

  it('with on_break: error, a break is a last {"error"} line and ollama-js throws it', async () => {
    const { b, proxy } = await resumeRoute(h, breakAfter(3), taggedStream(WORDS, 'second'), { onBreak: 'error' });
    const seen = await streamed(proxy.origin);
    expect(seen.text).toBe('The quick brown ');
    expect(seen.failed).toMatch(/^llm-route: /);
    expect(b.requests).toHaveLength(0);
  });
});

describe('hedged first tokens, Ollama client', () => {
  it('a stalled first tier: the next starts after hedge_ms and answers; the loser never reaches ollama-js', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      ctx.startStream();
      await ctx.closed;
    });
    b.always(healthyStream(WORDS, { delayMs: 10 }));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 100 },
    });
    const seen = await streamed(proxy.origin);
    // The model of the tier that won the race.
    expect(seen).toEqual({ text: FULL, models: new Set(['b-model']), done: true, failed: null });
    const line = await requestLog(proxy);
    expect(line).toMatchObject({ protocol: 'ollama', tier: 'b', hedged: { winner: 'b', loser: 'a' } });
    expect(metric((await fetchMetrics(proxy)).samples, 'llm_requests_total', { route: 'chat', tier: 'b', outcome: 'ok', protocol: 'ollama' })).toBe(1);
  });
});
