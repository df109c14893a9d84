import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { checkTier } from '../../../src/health/check-tier.js';
import { anthropicText, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { ollamaDone, ollamaLine, startOllamaStream } from '../../helpers/ollama-upstream.js';
import { configYaml, type TierSpec } from '../../helpers/proxy.js';

const h = useHarness();

function tierOf(spec: TierSpec): Tier {
  return loadConfigText(configYaml({ tiers: [spec] }), '/test/llm-route.yaml', {}).routes.get('chat')!.tiers[0];
}

/** The health checks and probe speak each provider type's own API. */
describe('checkTier for anthropic and ollama tiers', () => {
  it('ollama: the native model list, whether the model is loaded (/api/ps), and the TTFT of an /api/chat NDJSON stream', async () => {
    const ollama = await h.fake();
    let loaded: string[] = [];
    ollama.always((ctx) => {
      const path = ctx.req.url ?? '';
      if (path === '/api/tags') return ctx.json(200, { models: [{ name: 'qwen2.5:7b', model: 'qwen2.5:7b' }] });
      if (path === '/api/ps') return ctx.json(200, { models: loaded.map((name) => ({ name, model: name })) });
      if (path === '/api/chat') {
        startOllamaStream(ctx);
        ollamaLine(ctx, { content: 'p' });
        return ollamaDone(ctx, 3, 1);
      }
      ctx.res.writeHead(404).end('404 page not found');
    });
    const tier = tierOf({ name: 'local', url: `http://127.0.0.1:${ollama.port}`, type: 'ollama', model: 'qwen2.5:7b' });
    const cold = await checkTier(tier, { timeoutMs: 5000, ttft: true });
    expect(cold).toMatchObject({ reachable: true, modelPresent: true, loaded: false, status: 'healthy' });
    expect(cold.ttftMs).toBeTypeOf('number');
    const chat = ollama.requests.find((r) => r.url === '/api/chat');
    expect(chat?.body).toMatchObject({ model: 'qwen2.5:7b', stream: true, options: { num_predict: 1 } });
    loaded = ['qwen2.5:7b'];
    expect(await checkTier(tier, { timeoutMs: 5000, ttft: false })).toMatchObject({ loaded: true, status: 'healthy' });
  });

  it('anthropic: /v1/models with x-api-key and anthropic-version, TTFT of a Messages stream; a refused key says so', async () => {
    const anthropic = await h.fake();
    anthropic.always((ctx) => {
      const path = ctx.req.url ?? '';
      if (ctx.req.headers['x-api-key'] !== 'sk-ant-good')
        return ctx.json(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
      if (path === '/v1/models')
        return ctx.json(200, { data: [{ type: 'model', id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' }], has_more: false });
      if (path === '/v1/messages') {
        startAnthropicStream(ctx);
        anthropicText(ctx, 0, ['p']);
        return endAnthropicStream(ctx, 'max_tokens', 1);
      }
      ctx.json(404, { type: 'error', error: { type: 'not_found_error', message: 'nope' } });
    });
    const base = { name: 'claude', url: `http://127.0.0.1:${anthropic.port}`, type: 'anthropic' as const, model: 'claude-sonnet-4-5' };
    const check = await checkTier(tierOf({ ...base, api_key: 'sk-ant-good' }), { timeoutMs: 5000, ttft: true });
    expect(check).toMatchObject({ reachable: true, modelPresent: true, status: 'healthy' });
    expect(check.ttftMs).toBeTypeOf('number');
    const list = anthropic.requests.find((r) => r.url === '/v1/models');
    expect(list?.headers['anthropic-version']).toBe('2023-06-01');
    expect(anthropic.requests.find((r) => r.url === '/v1/messages')?.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 1, stream: true });
    const refused = await checkTier(tierOf({ ...base, api_key: 'sk-ant-bad-key' }), { timeoutMs: 5000, ttft: true });
    expect(refused.status).toBe('unhealthy');
    expect(refused.error).toMatch(/rejected the API key.*invalid x-api-key/);
    expect(refused.error).not.toContain('sk-ant-bad-key');
  });
});
