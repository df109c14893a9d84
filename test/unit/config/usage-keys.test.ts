import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';
import { defaultUsagePath, usagePath } from '../../../src/usage/paths.js';

const BASE = `version: 1
providers:
  ollama: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  openai:
    type: openai
    base_url: https://api.openai.com/v1
    price: { input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075 }
routes:
  chat:
    tiers:
      - { name: local, provider: ollama, model: m }
      - { name: cloud, provider: openai, model: gpt-4o-mini }
      - { name: big, provider: openai, model: gpt-4o, price: { input_per_mtok: 2.5, output_per_mtok: 10 } }
`;

function problems(text: string): string[] {
  try {
    loadConfigText(text, '/tmp/x/llm-route.yaml', {});
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('usage, price and budgets keys', () => {
  it("defaults: the log on, 90 days, the state dir path, no budgets; tiers inherit or replace their provider's price", () => {
    const config = loadConfigText(BASE, '/tmp/x/llm-route.yaml', {});
    expect(config.usage).toEqual({ path: null, retention_days: 90, enabled: true });
    expect(config.budgets).toEqual([]);
    const [local, cloud, big] = config.routes.get('chat')!.tiers;
    expect(local.price).toBeUndefined();
    expect(cloud.price).toEqual({ input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075 });
    // A tier's price replaces the provider's whole (its cached price does not leak in).
    expect(big.price).toEqual({ input_per_mtok: 2.5, output_per_mtok: 10 });
  });

  it("a relative usage.path is relative to the tier file's folder; budgets resolve to one unit each", () => {
    const config = loadConfigText(
      `${BASE}usage: { path: ./data/usage.db, retention_days: 7, enabled: false }
budgets:
  - { scope: provider:openai, per: day, usd: 5 }
  - { scope: route:chat, per: month, tokens: 2000000 }
`,
      '/tmp/x/llm-route.yaml',
      {},
    );
    expect(config.usage).toEqual({ path: '/tmp/x/data/usage.db', retention_days: 7, enabled: false });
    expect(usagePath(config)).toBe('/tmp/x/data/usage.db');
    expect(config.budgets).toEqual([
      { scope: 'provider:openai', per: 'day', unit: 'usd', limit: 5 },
      { scope: 'route:chat', per: 'month', unit: 'tokens', limit: 2_000_000 },
    ]);
  });

  it('the default path: $XDG_STATE_HOME/llm-route/usage.db, else ~/.local/state/llm-route/usage.db', () => {
    expect(defaultUsagePath({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/llm-route/usage.db');
    expect(defaultUsagePath({ HOME: '/h' })).toBe('/h/.local/state/llm-route/usage.db');
    expect(defaultUsagePath({ XDG_STATE_HOME: '', HOME: '/h' })).toBe('/h/.local/state/llm-route/usage.db');
    // The test run itself points at a temp dir, never the real state dir.
    expect(defaultUsagePath()).toBe(`${process.env.XDG_STATE_HOME}/llm-route/usage.db`);
  });

  it('budget scopes must name an existing provider or route, with file:line:col and did-you-mean', () => {
    expect(
      problems(`${BASE}budgets:
  - { scope: provider:opnai, per: day, usd: 5 }
  - { scope: route:nope, per: month, tokens: 10 }
  - { scope: provdr:openai, per: day, usd: 1 }
`),
    ).toEqual([
      '/tmp/x/llm-route.yaml:15:14: unknown provider "opnai" in budget scope; did you mean "provider:openai"? (at budgets[0].scope)',
      '/tmp/x/llm-route.yaml:16:14: unknown route "nope" in budget scope; defined routes: chat (at budgets[1].scope)',
      '/tmp/x/llm-route.yaml:17:14: invalid budget scope "provdr:openai": expected provider:NAME or route:NAME; did you mean "provider:openai"? (at budgets[2].scope)',
    ]);
  });

  it('a budget has exactly one of usd / tokens, and no two budgets count the same thing', () => {
    expect(
      problems(`${BASE}budgets:
  - { scope: route:chat, per: day }
  - { scope: route:chat, per: day, usd: 1, tokens: 5 }
  - { scope: route:chat, per: month, usd: 1 }
  - { scope: route:chat, per: month, usd: 2 }
`),
    ).toEqual([
      '/tmp/x/llm-route.yaml:15:5: a budget needs a limit: `usd: N` or `tokens: N` (at budgets[0])',
      '/tmp/x/llm-route.yaml:16:44: a budget has one limit: `usd` or `tokens`, not both (write two budgets for both) (at budgets[1].tokens)',
      '/tmp/x/llm-route.yaml:18:5: budgets[2] already limits route:chat in usd per month; keep one of them (at budgets[3])',
    ]);
  });

  it('unknown keys and bad values in price, usage and budgets are errors with positions', () => {
    const found = problems(`${BASE}usage: { retention: 30, enabled: maybe }
budgets:
  - { scope: route:chat, per: week, usd: -1 }
`).join('\n');
    expect(found).toContain('unknown key "retention" in usage; did you mean "retention_days"?');
    expect(found).toMatch(/:14:\d+: expected true or false, got "maybe" \(at usage\.enabled\)/);
    expect(found).toMatch(/expected one of "day", "month", got "week" \(at budgets\[0\]\.per\)/);
    expect(found).toContain('expected a positive number, got -1 (at budgets[0].usd)');
    expect(problems(BASE.replace('cached_input_per_mtok: 0.075', 'cache_per_mtok: 0.075')).join('\n')).toContain(
      'unknown key "cache_per_mtok" in providers.openai.price',
    );
  });
});
