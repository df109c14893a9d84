import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts, tierFit } from '../../../src/fit/tier-facts.js';
import { completion } from '../../helpers/fake-upstream.js';
import { pathOf } from '../../helpers/fit-servers.js';
import { fetchMetrics, logLine, metric, sleep, useHarness, waitFor } from '../../helpers/harness.js';

const h = useHarness();
beforeEach(() => resetTierFacts());

const words = (n: number): string => 'word '.repeat(n);

/**
 * Ollama's OpenAI-compatible endpoint (/v1/chat/completions): it documents no window there and
 * ignores num_ctx, so it reads its default 2,048 tokens of a longer prompt and answers 200,
 * reporting what it read. Discovery learns nothing (every other path 404s): the window is unknown.
 */
async function silentCutter(read: (body: Record<string, unknown>) => number) {
  const local = await h.fake();
  local.always((ctx) => {
    if (ctx.req.method === 'POST' && pathOf(ctx) === '/v1/chat/completions') {
      if (ctx.body.stream) {
        ctx.startStream();
        ctx.role();
        ctx.content('garbage');
        ctx.finish('stop');
        ctx.usage(read(ctx.body), 3);
        return ctx.done();
      }
      return ctx.json(200, completion('garbage', { prompt_tokens: read(ctx.body), completion_tokens: 3 }));
    }
    return ctx.json(404, { error: 'not found' });
  });
  const cloud = await h.fake();
  cloud.always((ctx) => ctx.json(200, completion('from cloud')));
  const proxy = await h.proxy({
    tiers: [
      { name: 'local', url: `${local.url}`, model: 'qwen3:8b', health: { warmup: false } },
      { name: 'cloud', url: cloud.url, health: { warmup: false } },
    ],
  });
  const tier = proxy.server.app.config.routes.get('chat')?.tiers[0];
  const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
  return { local, cloud, proxy, openai, tierWindow: () => (tier ? tierFit(tier).context : undefined) };
}

describe('silent truncation on a tier whose window is unknown', () => {
  it('found after the answer: a line of its own with the request id, the metric, and the tier learns its window', async () => {
    const { proxy, openai, cloud, tierWindow } = await silentCutter(() => 2048);
    expect(tierWindow()).toBeUndefined();
    const first = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(8000) }] }).withResponse();
    expect(first.data.choices[0].message.content).toBe('garbage'); // the client got the answer first
    const id = first.response.headers.get('x-request-id');
    expect((await logLine(proxy, id)).prompt_truncated).toBeUndefined(); // nothing was counted before sending
    const found = await waitFor(() => proxy.logs.find((l) => l.event === 'prompt_truncated' && l.id === id));
    expect(found).toMatchObject({ route: 'chat', tier: 'local', read: 2048 });
    expect(found.sent).toBeGreaterThan(7900);
    expect(metric((await fetchMetrics(proxy)).samples, 'llm_prompt_truncated_total', { route: 'chat', tier: 'local' })).toBe(1);
    expect(tierWindow()).toBe(2048);

    // The next long request skips the tier it would be cut on; a short one still goes there.
    const second = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(8000) }] });
    expect(second.choices[0].message.content).toBe('from cloud');
    expect(cloud.requests).toHaveLength(1);
    expect(
      (await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).choices[0].message.content,
    ).toBe('garbage');
  });

  it('a stream too: found from the usage the stream reported', async () => {
    const { proxy, openai, tierWindow } = await silentCutter(() => 2048);
    const stream = await openai.chat.completions
      .create({ model: 'chat', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: words(8000) }] })
      .withResponse();
    let text = '';
    for await (const chunk of stream.data) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('garbage');
    const id = stream.response.headers.get('x-request-id');
    await waitFor(() => proxy.logs.find((l) => l.event === 'prompt_truncated' && l.id === id));
    expect(tierWindow()).toBe(2048);
  });

  it('a tier that read the whole prompt: nothing reported, nothing learned', async () => {
    // As the real count goes: one token a word, and a few for the template.
    const { proxy, openai, tierWindow } = await silentCutter((body) => JSON.stringify(body.messages).split('word').length + 10);
    const made = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(8000) }] }).withResponse();
    await logLine(proxy, made.response.headers.get('x-request-id'));
    await sleep(100); // the late check, were there one, runs on the next turns of the loop
    expect(proxy.logs.filter((l) => l.event === 'prompt_truncated')).toEqual([]);
    expect(tierWindow()).toBeUndefined();
  });
});
