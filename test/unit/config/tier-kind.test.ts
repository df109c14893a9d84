import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { tierKind } from '../../../src/config/tier-kind.js';

// Local or cloud, as the start-up notice, the status line and exec's exit summary say it.

const YAML = `
version: 1
providers:
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434" }
  lan: { type: openai, base_url: "http://192.168.1.20:8000/v1" }
  priced: { type: openai, base_url: "http://127.0.0.1:8080/v1", price: { input_per_mtok: 1, output_per_mtok: 2 } }
  openai: { type: openai, base_url: "https://api.openai.com/v1", api_key: "\${OPENAI_API_KEY}" }
  plan: { type: anthropic, base_url: "https://api.anthropic.com", api_key: from_client }
  plan_through_a_local_gateway: { type: anthropic, base_url: "http://127.0.0.1:4000", api_key: from_client }
routes:
  chat:
    tiers:
      - { name: ollama, provider: ollama, model: m }
      - { name: lan, provider: lan, model: m }
      - { name: priced, provider: priced, model: m }
      - { name: openai, provider: openai, model: m }
      - { name: plan, provider: plan, model: m }
      - { name: gateway, provider: plan_through_a_local_gateway, model: m }
`;

describe('tierKind', () => {
  it('local: on the local network, unpriced, with a key of its own or none; cloud: anything else', () => {
    const config = loadConfigText(YAML, '/test/llm-route.yaml', { OPENAI_API_KEY: 'sk-test' });
    const kinds = Object.fromEntries(config.routes.get('chat')!.tiers.map((tier) => [tier.name, tierKind(tier)]));
    expect(kinds).toEqual({ ollama: 'local', lan: 'local', priced: 'cloud', openai: 'cloud', plan: 'cloud', gateway: 'cloud' });
  });
});
