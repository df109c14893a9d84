import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';

// A `type: gemini` provider in the tier file (docs/tier-file.md): what it takes, what it
// refuses, what `validate` warns of, and its tiers' defaults.

const file = (providers: string[], tiers = '[{ name: g, provider: g, model: gemini-2.5-flash }]'): string =>
  ['version: 1', 'providers:', ...providers.map((line) => `  ${line}`), 'routes:', `  chat: { tiers: ${tiers} }`, ''].join('\n');

function problems(yaml: string): string[] {
  try {
    loadConfigText(yaml, 'llm-route.yaml', { GEMINI_API_KEY: 'AIza-secret' });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => p.message);
    throw error;
  }
}

describe('a gemini provider', () => {
  it("loads with its key from the environment, or the client's own; a cloud tier: no prefill, the default tokenizer", () => {
    const config = loadConfigText(
      file([
        'g: { type: gemini, base_url: "https://generativelanguage.googleapis.com", api_key: "${GEMINI_API_KEY}" }',
        'mine: { type: gemini, base_url: "https://generativelanguage.googleapis.com", api_key: from_client }',
      ]),
      'llm-route.yaml',
      { GEMINI_API_KEY: 'AIza-secret' },
    );
    const [tier] = config.routes.get('chat')!.tiers;
    expect(tier.provider).toMatchObject({ type: 'gemini', api_key: 'AIza-secret', local: false });
    expect([tier.prefill, tier.tokenizer]).toEqual([false, 'o200k_base']);
    expect(config.providers.get('mine')).toMatchObject({ from_client: true });
    expect(config.providers.get('mine')?.api_key).toBeUndefined();
    expect(config.warnings).toEqual([]);
  });

  it('refuses passthrough and ollama options, as for anthropic', () => {
    const found = problems(
      file(
        ['g: { type: gemini, base_url: "https://generativelanguage.googleapis.com", passthrough: [messages], ollama: { num_ctx: 8192 } }'],
        '[{ name: g, provider: g, model: m, ollama: { keep_alive: 5m } }]',
      ),
    );
    expect(found).toEqual([
      'passthrough is for openai-type providers (servers that also serve other APIs); this one is type gemini',
      'ollama options need type: ollama (the native API); this provider is type gemini',
      'ollama options need a provider of type ollama; "g" is type gemini',
    ]);
  });

  it('validate warns of a base_url ending in /v1beta or /v1 (llm-route adds its own path); the key never shows', () => {
    for (const base of ['https://generativelanguage.googleapis.com/v1beta', 'https://generativelanguage.googleapis.com/v1/']) {
      const { warnings } = loadConfigText(file([`g: { type: gemini, base_url: "${base}", api_key: "\${GEMINI_API_KEY}" }`]), 'llm-route.yaml', {
        GEMINI_API_KEY: 'AIza-secret',
      });
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /warning: a gemini base_url usually has no \/v1(beta)? \(llm-route adds \/v1beta\/models\/\{model\}:streamGenerateContent\), e\.g\. https:\/\/generativelanguage\.googleapis\.com \(at providers\.g\.base_url\)$/,
      );
      expect(warnings[0]).not.toContain('AIza-secret');
    }
    const gateway = loadConfigText(file(['g: { type: gemini, base_url: "https://gw.example/gemini" }']), 'llm-route.yaml', {});
    expect(gateway.warnings).toEqual([]);
  });

  it('an ollama provider still takes no client credential, and says which types do', () => {
    expect(problems(file(['g: { type: ollama, base_url: "http://127.0.0.1:11434", api_key: from_client }']))).toEqual([
      "api_key: from_client is for anthropic, openai and gemini providers (a client's own key or login is for a cloud API); an ollama provider takes no credential",
    ]);
  });
});
