import { afterEach, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { Tier } from '../../../src/config/schema.js';
import { recordDiscovered, resetTierFacts } from '../../../src/fit/tier-facts.js';
import { modelCatalog, routeFacts } from '../../../src/server/model-catalog.js';

const config = loadConfigText(
  `version: 1
providers:
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434" }
  claude: { type: anthropic, base_url: "https://api.anthropic.com", api_key: "\${ANTHROPIC_API_KEY}" }
routes:
  chat:
    aliases: ["qwen", "gpt-*"]
    tiers:
      - { name: small, provider: ollama, model: "qwen3:8b", max_tokens: 1024 }
      - { name: big, provider: ollama, model: "qwen3:32b", context: 32768, max_tokens: 4096, tools: false }
  mixed:
    aliases: ["qwen"]
    tiers:
      - { provider: ollama, model: "qwen3:8b" }
      - { provider: claude, model: claude-sonnet-4-5 }
  embed:
    kind: embeddings
    tiers: [{ provider: ollama, model: nomic-embed-text }]
`,
  '/t/llm-route.yaml',
  { ANTHROPIC_API_KEY: 'sk-ant-test' },
);
const route = (name: string) => {
  const found = config.routes.get(name);
  if (!found) throw new Error(`no route ${name}`);
  return found;
};
const [small] = route('chat').tiers;
afterEach(() => resetTierFacts());

describe('routeFacts', () => {
  it("takes the largest window and answer cap among a route's tiers; tools unless every tier has none", () => {
    expect(routeFacts(route('chat'))).toEqual({ context: 32768, output: 4096, tools: true, vision: false, thinking: false });
    recordDiscovered(small, { context: 40960, source: 'ollama /api/show', vision: true, thinking: true });
    expect(routeFacts(route('chat'))).toEqual({ context: 40960, output: 4096, tools: true, vision: true, thinking: true });
  });

  it('has no answer cap when one tier answers uncapped; a hosted tier takes images and, being Claude, reasons', () => {
    expect(routeFacts(route('mixed'))).toMatchObject({ output: undefined, vision: true, thinking: true });
  });
});

describe('modelCatalog', () => {
  it('lists each route and each plain alias once, the first route to name it keeping it; loaded when the first tier is warm', () => {
    const cold = new Set<Tier>([route('mixed').tiers[0]]);
    const catalog = modelCatalog(config, { isCold: (tier) => cold.has(tier) }, 1234);
    expect(catalog.startedAt).toBe(1234);
    expect(catalog.models.map((m) => `${m.name}${m.loaded ? ' loaded' : ''}`)).toEqual(['chat loaded', 'qwen loaded', 'mixed', 'embed loaded']);
    expect(catalog.models.find((m) => m.name === 'qwen')).toMatchObject({ output: 4096 }); // chat's, not mixed's
  });

  it('marks an embeddings route as one, with none of a chat model’s abilities', () => {
    recordDiscovered(route('embed').tiers[0], { context: 8192, source: 'ollama /api/show', vision: true });
    const embed = modelCatalog(config, { isCold: () => false }, 0).models.find((m) => m.name === 'embed');
    expect(embed).toMatchObject({ embedding: true, context: 8192, tools: false, vision: false, thinking: false });
  });
});
