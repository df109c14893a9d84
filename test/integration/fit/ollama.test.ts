import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts } from '../../../src/fit/tier-facts.js';
import { completion } from '../../helpers/fake-upstream.js';
import { ollamaPs, ollamaServer, ollamaShow, pathOf } from '../../helpers/fit-servers.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';
import { join } from 'node:path';

const h = useHarness();
const tempDir = useTempDirs();
beforeEach(() => resetTierFacts());

const words = (n: number): string => 'word '.repeat(n);

/** An Ollama fake: qwen3 with a 40,960-token model window, its runner loaded at `loaded`; chat answers report `read` prompt tokens. */
async function ollamaWithCloud(tierExtra: Record<string, unknown> = {}, loaded = 8192) {
  const ollama = await h.fake();
  const discovery = ollamaServer(ollamaShow('qwen3', 40960, ['completion', 'tools']), ollamaPs('qwen3:8b', loaded));
  // Its prompt_eval_count is what it read: the whole prompt (one token a word, and the template's few).
  const read = (body: Record<string, unknown>): number => JSON.stringify(body.messages).split('word').length + 10;
  ollama.always((ctx) =>
    pathOf(ctx) === '/api/chat' ? ctx.json(200, ollamaWhole({ role: 'assistant', content: 'from ollama' }, read(ctx.body), 3)) : discovery(ctx),
  );
  const cloud = await h.fake();
  cloud.always((ctx) => ctx.json(200, completion('from cloud')));
  const proxy = await h.proxy({
    tiers: [
      { name: 'local', url: `http://127.0.0.1:${ollama.port}`, type: 'ollama', model: 'qwen3:8b', health: { warmup: false }, extra: tierExtra },
      { name: 'cloud', url: cloud.url, health: { warmup: false } },
    ],
  });
  proxy.server.startActiveChecks();
  await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered' && l.tier === 'local'));
  const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
  const chats = () => ollama.requests.filter((r) => r.url === '/api/chat');
  return { ollama, cloud, proxy, openai, chats };
}

describe("route by fit: Ollama's window is set per request, not hoped for", () => {
  it("the loaded runner's window when the request fits it, else the smallest 4096·2^k that fits, capped by context_length; past that, skipped", async () => {
    const { openai, chats, cloud } = await ollamaWithCloud();
    const ask = async (content: string) =>
      (await openai.chat.completions.create({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content }] })).choices[0].message.content;
    expect(await ask('hi')).toBe('from ollama');
    expect(chats()[0].body.options).toMatchObject({ num_ctx: 8192 });
    expect(await ask(words(12_000))).toBe('from ollama');
    expect(chats()[1].body.options).toMatchObject({ num_ctx: 16384 });
    // The runner now holds 16,384: a small request reuses it (no reload back to 8,192).
    expect(await ask('hi again')).toBe('from ollama');
    expect(chats()[2].body.options).toMatchObject({ num_ctx: 16384 });
    expect(await ask(words(36_000))).toBe('from ollama');
    expect(chats()[3].body.options).toMatchObject({ num_ctx: 40960 });
    expect(await ask(words(50_000))).toBe('from cloud');
    expect(chats()).toHaveLength(4);
    expect(cloud.requests.filter((r) => r.url.endsWith('/chat/completions'))).toHaveLength(1);
  });

  it('no runner loaded: 4096 for a small request', async () => {
    const { openai, chats } = await ollamaWithCloud({}, 0);
    await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(chats()[0].body.options).toMatchObject({ num_ctx: 4096 });
  });

  it('a tier that configures num_ctx keeps it, and that is its window', async () => {
    const { openai, chats, cloud } = await ollamaWithCloud({ ollama: { num_ctx: 2048 } });
    await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(chats()[0].body.options).toMatchObject({ num_ctx: 2048 });
    const long = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(3000) }] });
    expect(long.choices[0].message.content).toBe('from cloud');
    expect(chats()).toHaveLength(1);
    expect(cloud.requests.filter((r) => r.url.endsWith('/chat/completions'))).toHaveLength(1);
  });
});

describe('route by fit: a silent truncation is detected and teaches the window', () => {
  it('reported prompt tokens under 70% of the count: prompt_truncated on the log line, the metric, and the next long prompt skips the tier', async () => {
    const db = join(tempDir(), 'usage.db');
    const ollama = await h.fake();
    const discovery = ollamaServer(ollamaShow('qwen3', 40960, ['completion']), { models: [] });
    // Like Ollama with a window smaller than it was told: it reads 2,048 tokens and answers 200.
    ollama.always((ctx) => (pathOf(ctx) === '/api/chat' ? ctx.json(200, ollamaWhole({ role: 'assistant', content: 'garbage' }, 2048, 3)) : discovery(ctx)));
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('from cloud', { prompt_tokens: 12_010, completion_tokens: 3 })));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: `http://127.0.0.1:${ollama.port}`, type: 'ollama', model: 'qwen3:8b', health: { warmup: false } },
        { name: 'cloud', url: cloud.url, health: { warmup: false } },
      ],
      top: { usage: { path: db } },
    });
    proxy.server.startActiveChecks();
    await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered' && l.tier === 'local'));
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const first = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(12_000) }] }).withResponse();
    expect(first.data.choices[0].message.content).toBe('garbage');
    const line = await waitFor(() => proxy.logs.find((l) => l.id === first.response.headers.get('x-request-id')));
    const truncated = line.prompt_truncated as { sent: number; read: number };
    expect(truncated.read).toBe(2048);
    expect(truncated.sent).toBeGreaterThan(11_000);
    const metrics = await (await fetch(`${proxy.origin}/metrics`)).text();
    expect(metrics).toContain('llm_prompt_truncated_total{route="chat",tier="local"} 1');

    const second = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: words(12_000) }] }).withResponse();
    expect(second.data.choices[0].message.content).toBe('from cloud');
    const skipped = await waitFor(() => proxy.logs.find((l) => l.id === second.response.headers.get('x-request-id')));
    expect(String((skipped.attempts as Array<{ message: string }>)[0].message)).toMatch(/2048-token window \(learned\)/);
    // A short prompt still goes to the local tier, and is not reported as truncated (30 of ~5 tokens read is fine).
    const short = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(short.data.choices[0].message.content).toBe('garbage');
    const shortLine = await waitFor(() => proxy.logs.find((l) => l.id === short.response.headers.get('x-request-id')));
    expect(shortLine.prompt_truncated).toBeUndefined();
    expect(ollama.requests.filter((r) => r.url === '/api/chat')).toHaveLength(2);
    await proxy.server.usage.flush();
    const rows = readRequests(db);
    expect(rows.map((r) => r.prompt_truncated)).toEqual([JSON.stringify(truncated), null, null]);
  });
});
