import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Tier } from '../../../src/config/schema.js';
import { discoverTier } from '../../../src/fit/discover-tier.js';
import { recordDiscovered, resetTierFacts } from '../../../src/fit/tier-facts.js';
import { llamaProps, openaiServer } from '../../helpers/fit-servers.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();
beforeEach(() => resetTierFacts());

// docs/operations.md, "Endpoints": /v1/models gives each route the window a client may plan with.
describe("GET /v1/models: each route's window", () => {
  it("the largest known window among the route's tiers (configured or discovered); none known: left out", async () => {
    const llama = await h.fake();
    llama.always(openaiServer({ '/props': llamaProps(16384) }));
    const blank = await h.fake();
    blank.always((ctx) => ctx.error(404, 'not found'));
    const p = await h.proxy(`version: 1
server: { port: 0 }
providers:
  llama: { type: openai, base_url: "${llama.url}", health: { warmup: false } }
  blank: { type: openai, base_url: "${blank.url}", health: { warmup: false } }
  cloud: { type: openai, base_url: "https://api.cloud.example/v1", api_key: k, health: { warmup: false } }
routes:
  chat:
    tiers: [{ provider: llama, model: tiny }, { provider: cloud, model: big, context: 128000 }]
  discovered:
    tiers: [{ provider: blank, model: m, context: 4096 }, { provider: llama, model: tiny }]
  unknown:
    tiers: [{ provider: blank, model: m }]
  private:
    local_only: true
    tiers: [{ provider: cloud, model: big, context: 200000 }, { provider: blank, model: m, context: 8192 }]
`);
    // Discovery as the health checker runs it (the test proxy starts none): llama.cpp's /props read for real.
    const tier = p.server.app.config.routes.get('discovered')?.tiers[1] as Tier;
    recordDiscovered(tier, (await discoverTier(tier, { timeoutMs: 2000 })).facts);
    const openai = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const windows = (await openai.models.list()).data as Array<{ id: string; context_window?: number }>;
    expect(windows.map((m) => [m.id, m.context_window])).toEqual([
      ['chat', 128000],
      ['discovered', 16384],
      ['unknown', undefined],
      ['private', 8192],
    ]);
    expect(Object.hasOwn(windows[2], 'context_window')).toBe(false);

    const anthropic = new Anthropic({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 });
    const models: Array<{ id: string; max_input_tokens?: number; type: string }> = [];
    for await (const model of anthropic.models.list()) models.push(model as (typeof models)[number]);
    expect(models.map((m) => [m.id, m.type, m.max_input_tokens])).toEqual([
      ['chat', 'model', 128000],
      ['discovered', 'model', 16384],
      ['unknown', 'model', undefined],
      ['private', 'model', 8192],
    ]);
  });
});
