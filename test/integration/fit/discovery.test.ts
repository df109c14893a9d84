import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { discoverTier } from '../../../src/fit/discover-tier.js';
import { resetTierFacts, tierFit } from '../../../src/fit/tier-facts.js';
import { completion } from '../../helpers/fake-upstream.js';
import { llamaProps, lmStudioModels, ollamaPs, ollamaServer, ollamaShow, openaiServer, pathOf, vllmModels } from '../../helpers/fit-servers.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';
import { controlYaml, startFileProxy } from '../../helpers/control-kit.js';

const h = useHarness();
beforeEach(() => resetTierFacts());

function tierAt(url: string, type: 'openai' | 'ollama', model: string, extra: Record<string, unknown> = {}): Tier {
  const config = loadConfigText(
    configYaml({ tiers: [{ name: 'local', url, type, model, extra, health: { warmup: false, timeout_ms: 300 } }] }),
    '/t/llm-route.yaml',
    {},
  );
  return (config.routes.get('chat') as { tiers: Tier[] }).tiers[0];
}

describe("discovery reads each server's own documented endpoints", () => {
  it('Ollama: /api/show model_info["<arch>.context_length"] and capabilities, /api/ps the loaded runner\'s context_length', async () => {
    const ollama = await h.fake();
    ollama.always(ollamaServer(ollamaShow('qwen3', 40960, ['completion', 'tools', 'thinking']), ollamaPs('qwen3:8b', 8192)));
    const found = await discoverTier(tierAt(`http://127.0.0.1:${ollama.port}`, 'ollama', 'qwen3:8b'), { timeoutMs: 1000 });
    expect(found).toEqual({
      facts: { context: 40960, modelContext: 40960, loadedContext: 8192, source: 'ollama /api/show', vision: false, tools: true, thinking: true },
    });
    const show = ollama.requests.find((r) => r.url === '/api/show');
    expect(show?.body).toEqual({ model: 'qwen3:8b' });
  });

  it("vLLM: max_model_len of the tier's model in GET /v1/models", async () => {
    const vllm = await h.fake();
    vllm.always(openaiServer({ '/v1/models': vllmModels('Qwen/Qwen2.5-7B-Instruct', 32768) }));
    const found = await discoverTier(tierAt(vllm.url, 'openai', 'Qwen/Qwen2.5-7B-Instruct'), { timeoutMs: 1000 });
    expect(found.facts).toEqual({ context: 32768, source: 'vllm /v1/models' });
  });

  it('llama.cpp: default_generation_settings.n_ctx (one slot) and modalities.vision of GET /props', async () => {
    const llama = await h.fake();
    llama.always(
      openaiServer({
        '/v1/models': { object: 'list', data: [{ id: 'tiny', object: 'model', owned_by: 'llamacpp', meta: { n_ctx: 1024, n_ctx_train: 8192 } }] },
        '/props': llamaProps(1024, true),
      }),
    );
    const found = await discoverTier(tierAt(llama.url, 'openai', 'tiny'), { timeoutMs: 1000 });
    expect(found.facts).toEqual({ context: 1024, source: 'llama.cpp /props', vision: true });
  });

  it('LM Studio: loaded_context_length, else max_context_length, and type "vlm" of GET /api/v0/models', async () => {
    const lms = await h.fake();
    lms.always(openaiServer({ '/api/v0/models': lmStudioModels() }));
    expect((await discoverTier(tierAt(lms.url, 'openai', 'meta-llama-3.1-8b-instruct'), { timeoutMs: 1000 })).facts).toEqual({
      context: 4096,
      source: 'lmstudio /api/v0/models',
      vision: false,
    });
    expect((await discoverTier(tierAt(lms.url, 'openai', 'qwen2-vl-7b-instruct'), { timeoutMs: 1000 })).facts).toEqual({
      context: 32768,
      source: 'lmstudio /api/v0/models',
      vision: true,
    });
  });

  it('a server that documents none, a malformed answer, a slow one and a dead one: unknown, never a throw', async () => {
    const plain = await h.fake();
    plain.always(openaiServer({ '/v1/models': { object: 'list', data: [{ id: 'm', object: 'model' }] } }));
    expect(await discoverTier(tierAt(plain.url, 'openai', 'm'), { timeoutMs: 1000 })).toEqual({ facts: {} });

    const malformed = await h.fake();
    malformed.always(ollamaServer('{"model_info": {"general.architecture": "llama", "llama.context_length": "lots"'));
    const bad = await discoverTier(tierAt(`http://127.0.0.1:${malformed.port}`, 'ollama', 'llama3'), { timeoutMs: 1000 });
    expect(bad.facts.context).toBeUndefined();
    expect(bad.error).toMatch(/\/api\/show answered HTTP 200 without JSON/);

    const slow = await h.fake();
    slow.always((ctx) => (pathOf(ctx) === '/props' ? new Promise(() => undefined) : ctx.json(404, {})));
    const started = performance.now();
    const late = await discoverTier(tierAt(slow.url, 'openai', 'm'), { timeoutMs: 300 });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(late.facts).toEqual({});
    expect(late.error).toMatch(/llamaCpp: no answer within 300 ms/);

    const garbage = await h.fake();
    garbage.always((ctx) => {
      if (pathOf(ctx) !== '/props') return ctx.json(404, {});
      ctx.res.writeHead(200, { 'content-type': 'text/html' });
      ctx.res.end('<html>not llama</html>');
    });
    expect((await discoverTier(tierAt(garbage.url, 'openai', 'm'), { timeoutMs: 1000 })).error).toMatch(/\/props answered HTTP 200 without JSON/);

    const dead = await discoverTier(tierAt('http://127.0.0.1:1/v1', 'openai', 'm'), { timeoutMs: 1000 });
    expect(dead.facts).toEqual({});
    expect(dead.error).toMatch(/vllm: .*; llamaCpp: .*; lmStudio: /);
    expect(dead.unreachable).toBe(true);
    expect(late.unreachable).toBeUndefined();
  });

  it("a configured context overrides discovery; Ollama's configured num_ctx is its window", async () => {
    const llama = await h.fake();
    llama.always(openaiServer({ '/props': llamaProps(1024) }));
    const tier = tierAt(llama.url, 'openai', 'tiny', { context: 8000 });
    const { recordDiscovered } = await import('../../../src/fit/tier-facts.js');
    recordDiscovered(tier, (await discoverTier(tier, { timeoutMs: 1000 })).facts);
    expect(tierFit(tier)).toMatchObject({ context: 8000, contextSource: 'config', vision: false });
    const ollamaTier = tierAt('http://127.0.0.1:1', 'ollama', 'qwen3:8b', { ollama: { num_ctx: 16384 } });
    recordDiscovered(ollamaTier, { context: 40960, source: 'ollama /api/show' });
    expect(tierFit(ollamaTier)).toMatchObject({ context: 16384, contextSource: 'config' });
  });
});

describe('discovery in a running proxy', () => {
  it('learns the window at start (one log line) and then skips the tier for a prompt over it: the tier gets no chat request', async () => {
    const vllm = await h.fake();
    const cloud = await h.fake();
    vllm.always(openaiServer({ '/v1/models': vllmModels('small', 2048) }));
    cloud.always((ctx) => ctx.json(200, completion('from cloud')));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: vllm.url, model: 'small', health: { warmup: false } },
        { name: 'cloud', url: cloud.url, health: { warmup: false } },
      ],
    });
    proxy.server.startActiveChecks();
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered' && l.tier === 'local'));
    expect(line).toMatchObject({ context: 2048, context_source: 'vllm /v1/models', vision: null, tools: null });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const answer = await openai.chat.completions.create({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'word '.repeat(3000) }] });
    expect(answer.choices[0].message.content).toBe('from cloud');
    const short = await openai.chat.completions.create({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(short.choices[0].message.content).toBe('from local');
    expect(vllm.requests.filter((r) => r.url.endsWith('/chat/completions')).map((r) => (r.body.messages as Array<{ content: string }>)[0].content)).toEqual([
      'hi',
    ]);
  });

  it("runs again on reload: a tier moved to another server gets that server's window", async () => {
    const small = await h.fake();
    small.always(openaiServer({ '/props': llamaProps(1024) }));
    const big = await h.fake();
    big.always(openaiServer({ '/v1/models': vllmModels('m', 32768) }));
    const yaml = (url: string) => controlYaml({ tiers: [{ name: 'local', url, model: 'm', health: { warmup: false } }] });
    const p = await startFileProxy(yaml(small.url), { activeChecks: true });
    h.defer(() => p.close());
    await waitFor(() => p.logs.find((l) => l.event === 'fit_discovered' && l.context === 1024));
    p.write(yaml(big.url));
    expect(p.server.reload().ok).toBe(true);
    const line = await waitFor(() => p.logs.find((l) => l.event === 'fit_discovered' && l.context === 32768));
    expect(line).toMatchObject({ tier: 'local', context_source: 'vllm /v1/models' });
  });
});
