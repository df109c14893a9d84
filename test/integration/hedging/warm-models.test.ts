import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigText } from '../../../src/config/load.js';
import { loadedOf, resetLoadedModels } from '../../../src/health/loaded-models.js';
import { warmTiers } from '../../../src/health/warm-models.js';
import { llamaRouterModels, lmStudioModels, pathOf } from '../../helpers/fit-servers.js';
import type { Script } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';

// warm: true (docs/hedging.md): the server is asked to load the model at start.

const h = useHarness();
afterEach(() => resetLoadedModels());

/** A server answering GETs at `answers`, and its load request at `loadPath`; anything else 404. */
function loadable(answers: Record<string, unknown>, loadPath: string): Script {
  return (ctx) => {
    const path = pathOf(ctx);
    if (ctx.req.method === 'GET' && path in answers) return ctx.json(200, answers[path]);
    if (ctx.req.method === 'POST' && path === loadPath) return ctx.json(200, { status: 'loaded' });
    return ctx.json(404, { error: { message: `no ${path}` } });
  };
}

describe('warm: true', () => {
  it("Ollama gets its documented load request (the model, no prompt, the tier's keep_alive as written); llama.cpp's router /models/load, LM Studio /api/v1/models/load when not loaded; tiers without warm get nothing", async () => {
    const ollama = await h.fake();
    // Ollama's answer to a load request (github.com/ollama/ollama/blob/main/docs/api.md, "Load a model").
    ollama.always((ctx) => ctx.json(200, { model: 'qwen3:8b', created_at: '2026-12-03T13:40:00.000Z', response: '', done: true, done_reason: 'load' }));
    const router = await h.fake();
    router.always(loadable({ '/models': llamaRouterModels([{ id: 'gemma-3-4b', value: 'unloaded' }]) }, '/models/load'));
    const lms = await h.fake();
    lms.always(loadable({ '/api/v0/models': lmStudioModels() }, '/api/v1/models/load'));
    const cold = await h.fake();
    const config = loadConfigText(
      stringify({
        version: 1,
        providers: {
          ollama: { type: 'ollama', base_url: ollama.url.replace(/\/v1$/, '') },
          router: { type: 'openai', base_url: router.url },
          lms: { type: 'openai', base_url: lms.url },
          other: { type: 'openai', base_url: cold.url },
        },
        routes: {
          chat: {
            tiers: [
              { provider: 'ollama', model: 'qwen3:8b', warm: true, ollama: { keep_alive: '30m' } },
              { provider: 'router', model: 'gemma-3-4b', warm: true },
              // LM Studio: one model not loaded (asked to load), one loaded (a second load would load a second instance).
              { provider: 'lms', model: 'qwen2-vl-7b-instruct', warm: true },
              { provider: 'lms', model: 'meta-llama-3.1-8b-instruct', warm: true, name: 'loaded' },
              { provider: 'other', model: 'm' },
            ],
          },
          // The same server and model on a second route is asked once.
          code: { tiers: [{ provider: 'ollama', model: 'qwen3:8b', warm: true }] },
        },
      }),
      'f.yaml',
      {},
    );
    await warmTiers(config);
    expect(ollama.requests.map((r) => [r.url, r.body])).toEqual([['/api/generate', { model: 'qwen3:8b', keep_alive: '30m' }]]);
    const posts = (fake: typeof router) => fake.requests.filter((r) => r.url.endsWith('/load')).map((r) => [r.url, r.body]);
    expect(posts(router)).toEqual([['/models/load', { model: 'gemma-3-4b' }]]);
    expect(posts(lms)).toEqual([['/api/v1/models/load', { model: 'qwen2-vl-7b-instruct' }]]);
    expect(cold.requests).toHaveLength(0);
    // Ollama answers once the model is in memory: it is loaded now.
    expect(loadedOf(config.routes.get('chat')!.tiers[0])).toBe(true);
  });

  it('a server that refuses or is down costs nothing: warmTiers resolves', async () => {
    const down = await h.fake();
    down.always((ctx) => ctx.json(500, { error: 'out of memory' }));
    const config = loadConfigText(
      stringify({
        version: 1,
        providers: { o: { type: 'ollama', base_url: down.url.replace(/\/v1$/, '') }, gone: { type: 'ollama', base_url: 'http://127.0.0.1:9' } },
        routes: {
          chat: {
            tiers: [
              { provider: 'o', model: 'm', warm: true },
              { provider: 'gone', model: 'm', warm: true, timeouts: { cold_ttft_ms: 500, connect_ms: 200 } },
            ],
          },
        },
      }),
      'f.yaml',
      {},
    );
    await expect(warmTiers(config)).resolves.toBeUndefined();
    expect(down.requests).toHaveLength(1);
    expect(loadedOf(config.routes.get('chat')!.tiers[0])).toBeUndefined();
  });
});
