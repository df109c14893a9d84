import { describe, expect, it } from 'vitest';
import { findRoute } from '../../../src/config/find-route.js';
import { loadConfigText } from '../../../src/config/load.js';

const config = loadConfigText(
  `
version: 1
providers:
  p: { type: openai, base_url: "http://127.0.0.1:1/v1" }
routes:
  claude-sonnet-4-5:
    tiers: [{ provider: p, model: m }]
  claude:
    aliases: ["claude-*", "anthropic/*"]
    tiers: [{ provider: p, model: m }]
  codex:
    aliases: ["gpt-*", "codex-*", "claude-haiku-*"]
    tiers: [{ provider: p, model: m }]
`,
  '/t/llm-route.yaml',
  {},
);

describe('findRoute', () => {
  it('matches a route name exactly first, then aliases in file order', () => {
    expect(findRoute(config, 'claude-sonnet-4-5')?.name).toBe('claude-sonnet-4-5');
    expect(findRoute(config, 'claude-opus-5-5')?.name).toBe('claude');
    // "claude-*" comes before codex's "claude-haiku-*" in the file.
    expect(findRoute(config, 'claude-haiku-4-5')?.name).toBe('claude');
    expect(findRoute(config, 'anthropic/claude-3')?.name).toBe('claude');
    expect(findRoute(config, 'gpt-6.1-sol')?.name).toBe('codex');
    expect(findRoute(config, 'codex')?.name).toBe('codex');
    expect(findRoute(config, 'llama3')).toBeUndefined();
    // A glob is whole-name and literal apart from *: no regex meaning leaks in.
    expect(findRoute(config, 'xgpt-4')).toBeUndefined();
    expect(findRoute(config, 'gpt')).toBeUndefined();
  });
});
