import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '../../../src/config/errors.js';
import { findRoute, findRouteOrDefault } from '../../../src/config/find-route.js';
import { loadConfigText } from '../../../src/config/load.js';

/** docs/embeddings.md: routes of kind embeddings, their space, their tiers' space and max_batch. */

const PROVIDERS = `providers:
  ollama: { type: ollama, base_url: "http://127.0.0.1:11434" }
  box: { type: openai, base_url: "http://127.0.0.1:8080/v1" }
  claude: { type: anthropic, base_url: "https://api.anthropic.com", api_key: k }
`;

function load(routes: string) {
  return loadConfigText(`version: 1\n${PROVIDERS}routes:\n${routes}`, 'llm-route.yaml', {});
}

function problemsOf(routes: string): ConfigProblem[] {
  try {
    load(routes);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

const lines = (problems: ConfigProblem[]) => problems.map((p) => `${p.line}:${p.col} ${p.message}`);

describe('an embeddings route', () => {
  it('has its space (default: the first tier’s, which defaults to its model) and its tiers’ space and max_batch', () => {
    const config = load(`  embed:
    kind: embeddings
    tiers:
      - { provider: ollama, model: nomic-embed-text }
      - { provider: box, model: nomic-embed-text-v1.5.Q8_0.gguf, space: nomic-embed-text, max_batch: 64 }
  named:
    kind: embeddings
    space: nomic
    tiers: [{ provider: box, model: a.gguf, space: nomic }]
  chat:
    tiers: [{ provider: ollama, model: qwen }]
`);
    const embed = config.routes.get('embed');
    expect(embed?.embedding).toEqual({ space: 'nomic-embed-text' });
    expect(embed?.tiers.map((t) => t.embedding)).toEqual([
      { space: 'nomic-embed-text', max_batch: undefined },
      { space: 'nomic-embed-text', max_batch: 64 },
    ]);
    expect(embed?.savers).toEqual([]);
    expect(config.routes.get('named')?.embedding).toEqual({ space: 'nomic' });
    expect(config.routes.get('chat')?.embedding).toBeUndefined();
    expect(config.routes.get('chat')?.tiers[0].embedding).toBeUndefined();
  });

  it('refuses a tier of another space, at the key that says it, with file:line:col', () => {
    expect(
      lines(
        problemsOf(`  embed:
    kind: embeddings
    tiers:
      - { provider: ollama, model: nomic-embed-text }
      - { provider: box, model: nomic-embed-text-v1.5.Q8_0.gguf }
      - { name: other, provider: box, model: x, space: mxbai }
`),
      ),
    ).toEqual([
      '11:33 tier 1 of embeddings route "embed" is in another vector space: its model "nomic-embed-text-v1.5.Q8_0.gguf" (a tier\'s space is its model name unless it says space:), ' +
        'the route\'s is "nomic-embed-text"; vectors of two spaces cannot be compared, so a route never fails over between them (the same weights under another name: say space: "nomic-embed-text")',
      '12:56 tier 2 of embeddings route "embed" is in another vector space: its space "mxbai", the route\'s is "nomic-embed-text"; vectors of two spaces cannot be compared, ' +
        'so a route never fails over between them (the same weights under another name: say space: "nomic-embed-text")',
    ]);
    // The route's own space is the one every tier must be in, the first tier's too.
    expect(lines(problemsOf(`  embed:\n    kind: embeddings\n    space: s\n    tiers: [{ provider: ollama, model: m }]\n`))[0]).toMatch(
      /^10:40 tier 0 of embeddings route "embed" is in another vector space: its model "m"/,
    );
  });

  it('refuses a provider whose API has no embeddings, and the keys only chat uses', () => {
    expect(
      lines(
        problemsOf(`  embed:
    kind: embeddings
    hedge_ms: 500
    timeouts: { ttft_ms: 1000, total_ms: 60000 }
    tiers:
      - { provider: claude, model: m }
      - { provider: ollama, model: m, max_tokens: 10, tool_text: off }
`),
      ),
    ).toEqual([
      '9:5 hedge_ms races streams for their first token: it is for chat routes, and "embed" is an embeddings route (whole answers only)',
      '10:17 ttft_ms times a stream: embeddings route "embed" answers whole (connect_ms, idle_ms and total_ms bound it)',
      '12:21 provider "claude" is type anthropic, whose API has no embeddings: an embeddings tier needs type openai, ollama or gemini',
      '13:39 max_tokens caps an answer\'s tokens: it is for chat routes, and "embed" is an embeddings route',
      '13:55 tool_text recovers tool calls written as text: it is for chat routes, and "embed" is an embeddings route',
    ]);
  });

  it('takes a gemini tier, of its space like any other', () => {
    const text = `version: 1
providers:
  google: { type: gemini, base_url: "https://generativelanguage.googleapis.com", api_key: k }
routes:
  embed: { kind: embeddings, tiers: [{ provider: google, model: gemini-embedding-001, max_batch: 50 }] }
`;
    const embed = loadConfigText(text, 'llm-route.yaml', {}).routes.get('embed');
    expect(embed?.tiers[0].embedding).toEqual({ space: 'gemini-embedding-001', max_batch: 50 });
  });

  it('a chat route has no space: space and max_batch are refused there', () => {
    expect(lines(problemsOf(`  chat:\n    space: s\n    tiers: [{ provider: ollama, model: m, space: s, max_batch: 2 }]\n`))).toEqual([
      '8:5 space is for routes of kind: embeddings (their vector space); this route is a chat route',
      '9:43 space is for tiers of an embeddings route (kind: embeddings); route "chat" is a chat route',
      '9:53 max_batch is for tiers of an embeddings route (kind: embeddings); route "chat" is a chat route',
    ]);
  });
});

describe('finding the route of a request of a kind', () => {
  const config = load(`  chat:
    aliases: ["*"]
    tiers: [{ provider: ollama, model: qwen }]
  embed:
    kind: embeddings
    aliases: ["nomic-*"]
    tiers: [{ provider: ollama, model: nomic-embed-text }]
`);

  it('an exact name is either kind’s; an alias only its own kind’s; the default route only when of the kind', () => {
    expect(findRoute(config, 'embed', 'chat')?.name).toBe('embed');
    expect(findRoute(config, 'chat', 'embeddings')?.name).toBe('chat');
    expect(findRoute(config, 'nomic-embed-text', 'embeddings')?.name).toBe('embed');
    expect(findRoute(config, 'nomic-embed-text', 'chat')?.name).toBe('chat');
    expect(findRoute(config, 'text-embedding-3-small', 'embeddings')).toBeUndefined();
    const withDefault = { ...config, default_route: 'chat' };
    expect(findRouteOrDefault(withDefault, '', 'chat')?.name).toBe('chat');
    expect(findRouteOrDefault(withDefault, '', 'embeddings')).toBeUndefined();
  });
});
