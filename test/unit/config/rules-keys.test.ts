import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem } from '../../../src/config/errors.js';
import { findRoute } from '../../../src/config/find-route.js';
import { loadConfigText } from '../../../src/config/load.js';
import { summarizeConfig } from '../../../src/cli/validate.js';

const HEAD = `version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  lan: { type: openai, base_url: "http://192.168.1.20:8080/v1" }
  cloud: { type: openai, base_url: "https://api.openai.com/v1", api_key: k }
routes:
  chat:
    tiers: [{ provider: local, model: m }]
  cloud:
    tiers: [{ provider: cloud, model: m }]
`;

function problems(text: string): string[] {
  try {
    loadConfigText(text, '/t/llm-route.yaml', {});
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    throw error;
  }
  return [];
}

describe('rules: in the tier file', () => {
  it('loads rules in file order, each labelled by its name or its index', () => {
    const config = loadConfigText(
      `${HEAD}rules:
  - name: background
    when: { client: claude-code, class: background }
    route: chat
  - when: { images: true, prompt_tokens: ">= 60000", header: { X-Team: infra } }
    route: cloud
`,
      '/t/llm-route.yaml',
      {},
    );
    expect(config.rules?.map((rule) => [rule.label, rule.route])).toEqual([
      ['background', 'chat'],
      [1, 'cloud'],
    ]);
    expect(config.rules?.[1].when).toEqual({ images: true, prompt_tokens: '>= 60000', header: { 'X-Team': 'infra' } });
    expect(summarizeConfig(config)).toBe('ok: /t/llm-route.yaml — 2 routes (chat: local; cloud: cloud), 3 providers, 2 rules');
  });

  it('validate reports every bad rule at file:line:col: unknown keys, values, routes and comparisons', () => {
    const found = problems(`${HEAD}rules:
  - when: { client: claude-code, class: backgrund }
    route: chat
  - when: { imagez: true }
    route: clod
  - when: { prompt_tokens: "about 60000" }
    route: cloud
  - name: twice
    when: {}
    route: chat
  - name: twice
    when: { protocol: grpc }
    route: chat
    extra: 1
`);
    expect(found).toEqual([
      '/t/llm-route.yaml:12:41: expected one of "main", "background", "subagent", got "backgrund" (at rules[0].when.class)',
      '/t/llm-route.yaml:14:13: unknown key "imagez" in rules[1].when; did you mean "images"? (at rules[1].when.imagez)',
      '/t/llm-route.yaml:15:12: rule names unknown route "clod"; did you mean "cloud"? (at rules[1].route)',
      expect.stringMatching(/^\/t\/llm-route\.yaml:16:28: expected a comparison such as ">= 60000".*got "about 60000" \(at rules\[2\]\.when\.prompt_tokens\)$/),
      expect.stringMatching(/^\/t\/llm-route\.yaml:21:11: duplicate rule name "twice" \(rules\[3\] has it too\)/),
      expect.stringMatching(/^\/t\/llm-route\.yaml:22:23: expected one of "chat", "responses", "messages"/),
      expect.stringMatching(/^\/t\/llm-route\.yaml:24:5: unknown key "extra" in rules\[4\]/),
    ]);
  });

  it('warns about a local_only route without a local tier, not about one with a LAN tier', () => {
    const config = loadConfigText(
      `${HEAD}  private:
    local_only: true
    tiers: [{ provider: cloud, model: m }]
  lan-only:
    local_only: true
    tiers: [{ provider: cloud, model: m }, { provider: lan, model: m }]
`,
      '/t/llm-route.yaml',
      {},
    );
    expect(config.warnings).toEqual([
      '/t/llm-route.yaml:12:5: warning: route "private" is local_only but none of its tiers is on the local network; every request to it gets 503 no_local_tier (at routes.private.local_only)',
    ]);
    expect(config.routes.get('private')?.local_only).toBe(true);
    expect(config.routes.get('chat')?.local_only).toBeUndefined();
  });

  it('a class model name exec gives (<route>@background) names its route when nothing else claims it', () => {
    const config = loadConfigText(
      `${HEAD}  wide:
    aliases: ["cloud@*"]
    tiers: [{ provider: cloud, model: m }]
`,
      '/t/llm-route.yaml',
      {},
    );
    expect(findRoute(config, 'chat@background')?.name).toBe('chat');
    expect(findRoute(config, 'chat@subagent')?.name).toBe('chat');
    expect(findRoute(config, 'cloud@background')?.name).toBe('wide'); // an alias that claims the name wins, as before
    expect(findRoute(config, 'chat@main')).toBeUndefined();
    expect(findRoute(config, 'nothing@background')).toBeUndefined();
  });
});
