import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { resetTierFacts } from '../../src/fit/tier-facts.js';
import { completion } from '../helpers/fake-upstream.js';
import { ollamaPs, ollamaServer, ollamaShow, pathOf } from '../helpers/fit-servers.js';
import { useHarness, waitFor } from '../helpers/harness.js';
import { ollamaWhole } from '../helpers/ollama-upstream.js';

const h = useHarness();
beforeEach(() => resetTierFacts());

const words = (n: number): string => 'word '.repeat(n);

/** An Ollama fake: qwen3 with a 40,960-token model window, its runner loaded at `loaded`; chat answers report `read` prompt tokens. */
async function ollamaWithCloud(tierExtra: Record<string, unknown> = {}, loaded = 8192) {
  const ollama = await h.fake();
  const discovery = ollamaServer(ollamaShow('qwen3', 40960, ['completion', 'tools']), ollamaPs('qwen3:8b', loaded));
  ollama.always((ctx) => (pathOf(ctx) === '/api/chat' ? ctx.json(200, ollamaWhole({ role: 'assistant', content: 'from ollama' }, 30, 3)) : discovery(ctx)));
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

describe('route by fit: Ollama\'s window is set per request, not hoped for', () => {
  it('the loaded runner\'s window when the request fits it, else the smallest 4096·2^k that fits, capped by context_length; past that, skipped', async () => {
    const { openai, chats, cloud } = await ollamaWithCloud();
    const ask = async (content: string) => (await openai.chat.completions.create({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content }] })).choices[0].message.content;
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
