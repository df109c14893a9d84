import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../../src/config/load.js';
import type { Tier } from '../../../../src/config/schema.js';
import { resetTierFacts } from '../../../../src/fit/tier-facts.js';
import { checkTier } from '../../../../src/health/check-tier.js';
import { completion } from '../../../helpers/fake-upstream.js';
import { FakeGemini, geminiModel, geminiTextStream } from '../../../helpers/gemini-upstream.js';
import { useHarness, waitFor } from '../../../helpers/harness.js';
import { configYaml } from '../../../helpers/proxy.js';

/**
 * What llm-route learns of a gemini tier from Gemini's own API (docs/fit.md): the model's
 * inputTokenLimit from `/v1beta/models/{model}` is its window for fit, and the health check
 * finds the model in a list read page by page.
 */
const h = useHarness();
beforeEach(() => resetTierFacts());
const KEY = 'AIza-fit-key';

describe("a gemini tier's limits, read from Gemini's API", () => {
  it('inputTokenLimit is the window: a prompt well over it skips the tier (nothing sent), a short one is sent', async () => {
    const gemini = new FakeGemini(await h.fake(), [geminiModel('gemini-2.5-flash-lite', 2048, 8192)]);
    gemini.keys = [KEY];
    gemini.always(geminiTextStream(['from', ' gemini']));
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('from cloud')));
    const proxy = await h.proxy({
      tiers: [
        { name: 'gemini', type: 'gemini', url: gemini.url, model: 'gemini-2.5-flash-lite', api_key: KEY, health: { warmup: false } },
        { name: 'cloud', url: cloud.url, health: { warmup: false } },
      ],
    });
    proxy.server.startActiveChecks();
    const line = await waitFor(() => proxy.logs.find((l) => l.event === 'fit_discovered' && l.tier === 'gemini'));
    expect(line).toMatchObject({ context: 2048, context_source: 'gemini /v1beta/models' });
    const asked = gemini.fake.requests.find((r) => r.url === '/v1beta/models/gemini-2.5-flash-lite');
    expect(asked?.headers['x-goog-api-key']).toBe(KEY);

    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const long = await openai.chat.completions
      .create({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'word '.repeat(3000) }] })
      .withResponse();
    expect(long.data.choices[0].message.content).toBe('from cloud');
    expect(gemini.calls).toHaveLength(0);
    const attempts = proxy.logs.find((l) => l.event === 'request')?.attempts as Array<{ tier: string; outcome: string }>;
    expect(attempts[0]).toMatchObject({ tier: 'gemini', outcome: 'too_long' });

    const short = await openai.chat.completions.create({ model: 'chat', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const part of short) text += part.choices[0]?.delta.content ?? '';
    expect(text).toBe('from gemini');
    expect(gemini.calls).toHaveLength(1);
  });
});

describe("a gemini tier's health check", () => {
  function tierOf(gemini: FakeGemini, model: string, apiKey = KEY): Tier {
    const yaml = configYaml({ tiers: [{ name: 'gemini', type: 'gemini', url: gemini.url, model, api_key: apiKey }] });
    return (loadConfigText(yaml, '/t/llm-route.yaml', {}).routes.get('chat') as { tiers: Tier[] }).tiers[0];
  }

  it('finds the model on a later page of the list (pageToken), asked with x-goog-api-key', async () => {
    const models = ['gemini-2.0-flash', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemma-3-27b-it'].map((id) => geminiModel(id));
    const gemini = new FakeGemini(await h.fake(), models, 2);
    gemini.keys = [KEY];
    const check = await checkTier(tierOf(gemini, 'gemma-3-27b-it'), { timeoutMs: 2000, ttft: false });
    expect(check).toMatchObject({ status: 'healthy', reachable: true, modelPresent: true });
    expect(gemini.fake.requests.map((r) => r.url).filter((url) => url.startsWith('/v1beta/models?'))).toEqual([
      '/v1beta/models?pageSize=1000',
      '/v1beta/models?pageSize=1000&pageToken=2',
      '/v1beta/models?pageSize=1000&pageToken=4',
    ]);
    const missing = await checkTier(tierOf(gemini, 'gemini-9-ultra'), { timeoutMs: 2000, ttft: false });
    expect(missing.status).toBe('unhealthy');
    expect(missing.error).toMatch(/model "gemini-9-ultra" is not in the provider's model list \(it has: gemini-2\.0-flash, .*, gemma-3-27b-it\)/);
    expect(missing.error).toMatch(/HTTP 404: models\/gemini-9-ultra is not found for API version v1beta/);
  });

  it('a key Google refuses is unhealthy with its words, and the key is not in them', async () => {
    const gemini = new FakeGemini(await h.fake());
    gemini.keys = [KEY];
    const check = await checkTier(tierOf(gemini, 'gemini-2.5-flash', 'AIza-refused-secret'), { timeoutMs: 2000, ttft: false });
    expect(check.status).toBe('unhealthy');
    expect(check.error).toContain('API key not valid');
    expect(check.error).not.toContain('AIza-refused-secret');
  });
});
