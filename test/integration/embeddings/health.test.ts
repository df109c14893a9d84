import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { warmTiers } from '../../../src/health/warm-models.js';
import { startFileProxy, withModelList } from '../../helpers/control-kit.js';
import { llamaEmbeddings, ollamaEmbed } from '../../helpers/embedding-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';

/**
 * docs/embeddings.md: a tier of an embeddings route is checked and warmed with one input
 * embedded, never a chat (an embedding model answers none), in a ProxyServer started with
 * activeChecks: true (as `serve` does).
 */

const h = useHarness();

describe('health checks and warm-ups of embeddings tiers', () => {
  it('the warm-up embeds one input; the tier is healthy, and no chat request reaches the embedding model', async () => {
    const box = await h.fake();
    box.always(withModelList(['nomic'], llamaEmbeddings({ width: 4 })));
    const p = await startFileProxy(
      stringify({
        version: 1,
        server: { port: 0 },
        providers: { box: { type: 'openai', base_url: box.url } },
        routes: { embed: { kind: 'embeddings', tiers: [{ provider: 'box', model: 'nomic' }] } },
      }),
      { activeChecks: true },
    );
    h.defer(() => p.close());
    const check = await waitFor(() => p.logs.find((l) => l.event === 'health_check' && l.kind === 'warmup'), 5_000, 'the warm-up');
    expect(check).toMatchObject({ tier: 'box', ok: true });
    const posts = box.requests.filter((r) => r.url !== '/v1/models' && !r.url.startsWith('/props') && Object.keys(r.body).length > 0);
    expect(posts.map((r) => [r.url, r.body])).toEqual([['/v1/embeddings', { model: 'nomic', input: ['ping'] }]]);
  });

  it('an Ollama embedding tier with warm: true is loaded with /api/embed, as serve does at start (it does not generate)', async () => {
    const ollama = await h.fake();
    ollama.always((ctx) => {
      if (ctx.req.url === '/api/ps') return ctx.json(200, { models: [] });
      if (ctx.req.url === '/api/embed') return ollamaEmbed({ width: 4 })(ctx);
      return ctx.json(404, { error: 'not found' });
    });
    const config = loadConfigText(
      stringify({
        version: 1,
        providers: { oll: { type: 'ollama', base_url: `http://127.0.0.1:${ollama.port}`, health: { warmup: false } } },
        routes: { embed: { kind: 'embeddings', tiers: [{ provider: 'oll', model: 'nomic-embed-text', warm: true }] } },
      }),
      '/test/llm-route.yaml',
      {},
    );
    await warmTiers(config);
    const load = await waitFor(() => ollama.requests.find((r) => r.url === '/api/embed' && r.body.input === undefined), 5_000, 'the load request');
    expect(load.body).toEqual({ model: 'nomic-embed-text' });
    expect(ollama.requests.some((r) => r.url === '/api/generate')).toBe(false);
  });
});
