import { Ollama } from 'ollama';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream, type ScriptContext } from '../../helpers/fake-upstream.js';
import { healthzTiers } from '../../helpers/control-kit.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { ollamaLoadAnswer, ollamaWhole } from '../../helpers/ollama-upstream.js';
import type { RunningProxy, TierSpec } from '../../helpers/proxy.js';

/**
 * An editor's preload (docs/protocols.md, "A preload"): /api/generate with no prompt, /api/chat
 * with no messages. Ollama answers it with one JSON object whatever `stream` says; through
 * llm-route it goes to the route's first local `ollama` tier that is up and comes back as that
 * tier wrote it, never to a cloud tier, and no tier's health counts it.
 */
const h = useHarness();

async function ollamaFake(script: (ctx: ScriptContext) => void = ollamaLoadAnswer) {
  const fake = await h.fake();
  fake.always(script);
  const tier: TierSpec = {
    name: 'local',
    url: `http://127.0.0.1:${fake.port}`,
    type: 'ollama',
    model: 'qwen2.5:7b',
    provider: { ollama: { keep_alive: '30m' } },
    extra: { ollama: { num_ctx: 16384 } },
  };
  return { fake, tier };
}

/** A paid tier: every request that reaches it costs money. */
async function cloudTier() {
  const fake = await h.fake();
  fake.always((ctx) => (ctx.body.stream ? healthyStream(['from', ' the cloud'])(ctx) : ctx.json(200, completion('from the cloud'))));
  return { fake, tier: { name: 'cloud', url: fake.url, price: { input_per_mtok: 3, output_per_mtok: 15 } } satisfies TierSpec };
}

function post(proxy: RunningProxy, path: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${proxy.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function loadLines(proxy: RunningProxy): Array<Record<string, unknown>> {
  return proxy.logs.filter((line) => line.event === 'model_load');
}

describe('a preload through a route of an ollama tier and a cloud tier', () => {
  it('three preloads: 200 each with the tier’s own answer, the cloud never asked, the local tier healthy with no attempt counted', async () => {
    const local = await ollamaFake();
    const cloud = await cloudTier();
    const proxy = await h.proxy({ tiers: [local.tier, cloud.tier] });
    const asks: Array<[string, Record<string, unknown>]> = [
      ['/api/generate', { model: 'chat' }], // streaming by default
      ['/api/chat', { model: 'chat', messages: [] }],
      ['/api/generate', { model: 'chat', prompt: '', stream: false }],
    ];
    for (const [path, body] of asks) {
      const res = await post(proxy, path, body);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('x-llm-route-tier')).toBe('local');
      const text = await res.text();
      // The tier's bytes as it wrote them: one object, no NDJSON line after it.
      expect(text).not.toContain('\n');
      expect(JSON.parse(text)).toMatchObject({ model: 'qwen2.5:7b', done: true, done_reason: 'load' });
    }
    expect(cloud.fake.requests).toHaveLength(0);
    // Relayed as sent, on the same path, the tier's model, keep_alive and num_ctx in it.
    expect(local.fake.requests.map((r) => r.url)).toEqual(['/api/generate', '/api/chat', '/api/generate']);
    expect(local.fake.requests[0].body).toEqual({ model: 'qwen2.5:7b', keep_alive: '30m', options: { num_ctx: 16384 } });
    expect(local.fake.requests[1].body).toEqual({ model: 'qwen2.5:7b', messages: [], keep_alive: '30m', options: { num_ctx: 16384 } });
    const tiers = await healthzTiers(proxy);
    expect(tiers.local).toMatchObject({ state: 'healthy', consecutive_failures: 0, attempts: 0, failures: 0 });
    // Logged as loads, not as requests (and none failed).
    await waitFor(() => loadLines(proxy).length === 3, 3000, 'three load lines');
    expect(proxy.logs.filter((line) => line.event === 'request')).toHaveLength(0);
    expect(loadLines(proxy)[0]).toMatchObject({ route: 'chat', asked: 'load', tier: 'local', answered_by: 'tier', ok: true });
    // And the next real request still goes to the local tier.
    local.fake.always((ctx) => ctx.json(200, ollamaWhole({ content: 'Hello' })));
    const answer = await new Ollama({ host: proxy.origin }).chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.message.content).toBe('Hello');
    expect(cloud.fake.requests).toHaveLength(0);
  });

  it('stream true and stream false get the same one object, read by ollama-js either way', async () => {
    const local = await ollamaFake();
    const proxy = await h.proxy({ tiers: [local.tier] });
    const ollama = new Ollama({ host: proxy.origin });
    const whole = await ollama.generate({ model: 'chat', prompt: '' });
    expect(whole).toMatchObject({ done: true, done_reason: 'load', response: '' });
    const parts = [];
    for await (const part of await ollama.chat({ model: 'chat', messages: [], stream: true })) parts.push(part);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ done: true, done_reason: 'load', message: { role: 'assistant', content: '' } });
    for (const stream of [true, false]) {
      const res = await post(proxy, '/api/chat', { model: 'chat', stream });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ done: true, done_reason: 'load' });
    }
  });

  it('keep_alive 0 unloads: the client’s keep_alive reaches the tier and the answer says "unload"', async () => {
    const local = await ollamaFake();
    const proxy = await h.proxy({ tiers: [local.tier] });
    const res = await post(proxy, '/api/generate', { model: 'chat', keep_alive: 0 });
    expect(await res.json()).toMatchObject({ done: true, done_reason: 'unload' });
    expect(local.fake.requests[0].body).toMatchObject({ model: 'qwen2.5:7b', keep_alive: 0 });
    await waitFor(() => loadLines(proxy).length === 1);
    expect(loadLines(proxy)[0]).toMatchObject({ asked: 'unload', tier: 'local', ok: true });
  });

  it('an ollama tier that fails the load: llm-route answers the load itself, the cloud is not asked, the tier stays healthy', async () => {
    const local = await ollamaFake((ctx) => ctx.json(404, { error: "model 'qwen2.5:7b' not found" }));
    const cloud = await cloudTier();
    const proxy = await h.proxy({ tiers: [local.tier, cloud.tier] });
    for (let i = 0; i < 4; i++) {
      const res = await post(proxy, '/api/chat', { model: 'chat' });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ model: 'chat', message: { role: 'assistant', content: '' }, done: true, done_reason: 'load' });
    }
    expect(cloud.fake.requests).toHaveLength(0);
    expect((await healthzTiers(proxy)).local).toMatchObject({ state: 'healthy', attempts: 0, failures: 0 });
    await waitFor(() => loadLines(proxy).length === 4);
    expect(loadLines(proxy)[0]).toMatchObject({ tier: 'local', answered_by: 'llm-route', ok: false });
    expect(String(loadLines(proxy)[0].error)).toContain('404');
  });

  it('an ollama tier whose circuit is open is passed over for the next one that is up', async () => {
    const down = await ollamaFake((ctx) => ctx.json(500, { error: 'llama runner process has terminated' }));
    down.tier.name = 'first';
    down.tier.circuit = { failures: 1, cooldown_ms: 60_000 };
    const next = await ollamaFake();
    const proxy = await h.proxy({ tiers: [down.tier, next.tier] });
    // A real request opens the first tier's circuit (it fails over to the next).
    next.fake.always((ctx) => ctx.json(200, ollamaWhole({ content: 'ok' })));
    await new Ollama({ host: proxy.origin }).chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: false });
    next.fake.always(ollamaLoadAnswer);
    expect((await healthzTiers(proxy)).first.state).toBe('down');
    const res = await post(proxy, '/api/generate', { model: 'chat' });
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(await res.json()).toMatchObject({ done_reason: 'load' });
    expect(down.fake.requests.map((r) => r.url)).toEqual(['/api/chat']);
  });
});

describe('a preload to a route without an ollama tier', () => {
  it('warms the first local tier as at start (llama.cpp router: /models/load) and answers "load" itself; the cloud is not asked', async () => {
    const router = await h.fake();
    router.always((ctx) => {
      if (ctx.req.method === 'GET' && ctx.req.url === '/models') return ctx.json(200, { data: [{ id: 'qwen', status: { value: 'unloaded' } }] });
      if (ctx.req.url === '/models/load') return ctx.json(200, { success: true });
      ctx.error(404, 'not found');
    });
    const cloud = await cloudTier();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: router.url, model: 'qwen' }, cloud.tier] });
    const res = await post(proxy, '/api/generate', { model: 'chat', prompt: '' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // Ollama's load answer, in /api/generate's shape, under the model the client named.
    const answer = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(answer)).toEqual(['model', 'created_at', 'response', 'done', 'done_reason']);
    expect(answer).toMatchObject({ model: 'chat', response: '', done: true, done_reason: 'load' });
    expect(router.requests.find((r) => r.url === '/models/load')?.body).toEqual({ model: 'qwen' });
    expect(cloud.fake.requests).toHaveLength(0);
    await waitFor(() => loadLines(proxy).length === 1);
    expect(loadLines(proxy)[0]).toMatchObject({ asked: 'load', tier: 'local', answered_by: 'llm-route', ok: true });
  });

  it('a cloud-only route: answered "load" with nothing sent; an unload is answered "unload" with nothing sent', async () => {
    const cloud = await cloudTier();
    const proxy = await h.proxy({ tiers: [cloud.tier] });
    const load = (await (await post(proxy, '/api/chat', { model: 'chat', messages: null })).json()) as Record<string, unknown>;
    expect(Object.keys(load)).toEqual(['model', 'created_at', 'message', 'done', 'done_reason']);
    expect(load).toMatchObject({ done: true, done_reason: 'load' });
    expect(await (await post(proxy, '/api/chat', { model: 'chat', keep_alive: '0s' })).json()).toMatchObject({ done_reason: 'unload' });
    expect(cloud.fake.requests).toHaveLength(0);
    await waitFor(() => loadLines(proxy).length === 2);
    expect(loadLines(proxy)[1]).toMatchObject({ asked: 'unload', tier: null, answered_by: 'llm-route', ok: true });
  });

  it('a prompt is a generation as before: it goes to the tiers of the route', async () => {
    const cloud = await cloudTier();
    const proxy = await h.proxy({ tiers: [cloud.tier] });
    const res = await post(proxy, '/api/generate', { model: 'chat', prompt: 'hi', stream: false });
    expect(await res.json()).toMatchObject({ response: 'from the cloud', done: true, done_reason: 'stop' });
    expect(cloud.fake.requests).toHaveLength(1);
  });
});
