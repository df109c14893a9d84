import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfigText } from '../../../src/config/load.js';
import { tierNotice, tierNoticeText } from '../../../src/health/tier-notice.js';
import { withModelList } from '../../helpers/control-kit.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { useHarness } from '../../helpers/harness.js';
import { ollamaTextStream } from '../../helpers/ollama-upstream.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * The start-up notice's check against real sockets: which tier is unreachable or lacks its
 * model, where its requests go, and whether that tier is paid. Nothing paid is sent a request.
 */

const h = useHarness();

function config(providers: Record<string, unknown>, tiers: Array<Record<string, unknown>>) {
  return loadConfigText(stringify({ version: 1, providers, routes: { chat: { tiers } } }), '/test/llm-route.yaml', {});
}

/** Ollama's own answers: its tag list, and the 404 its /api/chat gives a model it does not have. */
async function ollamaWith(models: string[]) {
  const ollama = await h.fake();
  ollama.always((ctx) => {
    const url = ctx.req.url ?? '';
    if (url === '/api/tags') return ctx.json(200, { models: models.map((name) => ({ name, model: name })) });
    if (url === '/api/ps') return ctx.json(200, { models: [] });
    if (url === '/api/chat') {
      if (models.includes(String(ctx.body.model))) return ollamaTextStream(['ok'])(ctx);
      return ctx.json(404, { error: `model "${ctx.body.model}" not found, try pulling it first` });
    }
    return ctx.json(404, { error: 'not found' });
  });
  return ollama;
}

describe('tierNotice', () => {
  it('a local server that is down: unreachable, its requests go to the next tier that answered, paid', async () => {
    const cloud = await h.fake();
    cloud.always(withModelList(['gpt-x'], healthyStream(['hi'])));
    const down = await closedPort();
    const notices = await tierNotice(
      config(
        {
          local: { type: 'openai', base_url: `http://127.0.0.1:${down}/v1` },
          cloud: { type: 'openai', base_url: cloud.url, price: { input_per_mtok: 1, output_per_mtok: 2 } },
        },
        [
          { name: 'local', provider: 'local', model: 'qwen' },
          { name: 'cloud', provider: 'cloud', model: 'gpt-x' },
        ],
      ),
    );
    expect(notices).toEqual([
      {
        type: 'tier_unavailable',
        route: 'chat',
        tier: 'local',
        problem: 'unreachable',
        detail: `connection refused (127.0.0.1:${down})`,
        fallback: 'chat/cloud',
        paid: true,
      },
    ]);
    expect(tierNoticeText(notices[0])).toBe(`chat/local is unreachable (connection refused (127.0.0.1:${down})); its requests go to chat/cloud, a paid tier`);
    // The priced tier was asked for its model list only: no request that costs.
    expect(cloud.requests.map((r) => r.url)).toEqual(['/v1/models']);
  });

  it('an Ollama without the model: lacks its model (its list, then its own 404); the next tier is local and free', async () => {
    const ollama = await ollamaWith(['llama3.2:latest']);
    const llama = await FakeLlamaServer.start();
    const notices = await tierNotice(
      config(
        {
          ollama: { type: 'ollama', base_url: `http://127.0.0.1:${ollama.port}` },
          llama: { type: 'openai', base_url: llama.url },
        },
        [
          { name: 'big', provider: 'ollama', model: 'qwen3:8b' },
          // llama.cpp lists only its alias and serves any name: not missing.
          { name: 'small', provider: 'llama', model: 'whatever-name' },
        ],
      ),
    );
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ tier: 'big', problem: 'model_missing', fallback: 'chat/small', paid: false });
    expect(notices[0].detail).toContain('model "qwen3:8b" is not in the provider\'s model list (it has: llama3.2:latest)');
    expect(tierNoticeText(notices[0])).toMatch(/^chat\/big lacks its model \(.*\); its requests go to chat\/small, a local tier \(not paid\)$/);
    await llama.close();
  });

  it('no tier after it answered: its requests will fail; a cloud tier refusing the key is no notice (it answered)', async () => {
    const refusing = await h.fake();
    refusing.always((ctx) => ctx.error(401, 'invalid x-api-key', { type: 'authentication_error' }));
    const down = await closedPort();
    const notices = await tierNotice(
      config(
        {
          cloud: { type: 'anthropic', base_url: `http://127.0.0.1:${refusing.port}`, api_key: 'sk-wrong', price: { input_per_mtok: 3, output_per_mtok: 15 } },
          backup: { type: 'openai', base_url: `http://127.0.0.1:${down}/v1`, price: { input_per_mtok: 1, output_per_mtok: 1 } },
        },
        [
          { name: 'cloud', provider: 'cloud', model: 'claude-sonnet-4-5' },
          { name: 'backup', provider: 'backup', model: 'm' },
        ],
      ),
    );
    expect(notices.map((n) => [n.tier, n.problem, n.fallback])).toEqual([['backup', 'unreachable', null]]);
    expect(tierNoticeText(notices[0])).toMatch(/; no tier after it answered either: its requests will fail$/);
    expect(refusing.requests.map((r) => r.url)).toEqual(['/v1/models']);
  });

  it('a server that accepts and never answers is unreachable within the timeout', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    h.defer(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const port = (silent.address() as { port: number }).port;
    const notices = await tierNotice(config({ local: { type: 'openai', base_url: `http://127.0.0.1:${port}/v1` } }, [{ provider: 'local', model: 'm' }]), {
      timeoutMs: 300,
    });
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ problem: 'unreachable', detail: 'no answer within 300 ms (listing models)', fallback: null, paid: null });
  });
});
