import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';

const BASE = `version: 1
providers:
  openai:
    type: openai
    base_url: https://api.openai.com/v1
routes:
  chat:
    tiers:
      - { name: cloud, provider: openai, model: gpt-4o-mini }
`;

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    loadConfigText(text, '/tmp/x/llm-route.yaml', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('idempotency, limits and state keys', () => {
  it('defaults: keys kept a day, duplicates wait two minutes, everything embedded, no limits', () => {
    const config = loadConfigText(BASE, '/tmp/x/llm-route.yaml', {});
    expect(config.idempotency).toEqual({ ttl_s: 86_400, wait_ms: 120_000 });
    expect(config.state).toEqual({ prefix: 'llm-route:' });
    expect(config.providers.get('openai')?.limits).toBeUndefined();
  });

  it('reads limits per provider (queue_ms defaults to 1000), idempotency and state at the top level', () => {
    const config = loadConfigText(
      `${BASE.replace('base_url: https://api.openai.com/v1', 'base_url: https://api.openai.com/v1\n    limits: { rpm: 500, tpm: 200000, concurrency: 20 }')}idempotency: { ttl_s: 600, wait_ms: 5000 }
state: { redis: "redis://127.0.0.1:6390/2", prefix: "team-a:" }
`,
      '/tmp/x/llm-route.yaml',
      {},
    );
    expect(config.providers.get('openai')?.limits).toEqual({ rpm: 500, tpm: 200_000, concurrency: 20, queue_ms: 1000 });
    expect(config.routes.get('chat')?.tiers[0].provider.limits).toEqual({ rpm: 500, tpm: 200_000, concurrency: 20, queue_ms: 1000 });
    expect(config.idempotency).toEqual({ ttl_s: 600, wait_ms: 5000 });
    expect(config.state).toEqual({ redis: 'redis://127.0.0.1:6390/2', prefix: 'team-a:' });
  });

  it('rejects unknown keys, bad values and limits that limit nothing, with file:line:col', () => {
    const text = `${BASE.replace('base_url: https://api.openai.com/v1', 'base_url: https://api.openai.com/v1\n    limits: { queue_ms: 10 }')}idempotency: { ttl_s: 0, wiat_ms: 5 }
state: { redis: "http://127.0.0.1:6379" }
`;
    expect(problems(text)).toEqual([
      '/tmp/x/llm-route.yaml:6:5: limits need at least one of rpm, tpm or concurrency (queue_ms alone limits nothing) (at providers.openai.limits)',
      '/tmp/x/llm-route.yaml:11:23: expected a positive integer, got 0 (at idempotency.ttl_s)',
      '/tmp/x/llm-route.yaml:11:26: unknown key "wiat_ms" in idempotency; did you mean "wait_ms"? (at idempotency.wiat_ms)',
      '/tmp/x/llm-route.yaml:12:17: expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0, got a string (value hidden) (at state.redis)',
    ]);
    expect(
      problems(BASE.replace('base_url: https://api.openai.com/v1', 'base_url: https://api.openai.com/v1\n    limits: { rpm: -1, concurrency: 1.5 }')),
    ).toHaveLength(2);
  });

  it('never quotes a Redis URL in a problem: it may carry a password', () => {
    const found = problems(`${BASE}state: { redis: "\${REDIS_URL}", prefix: "" }\n`, { REDIS_URL: 'redis://:hunter2-secret@10.0.0.5:6379/0' });
    expect(found).toHaveLength(1);
    expect(found.join('\n')).not.toContain('hunter2-secret');
    const bad = problems(`${BASE}state: { redis: "\${REDIS_URL}" }\n`, { REDIS_URL: 'rdis://:hunter2-secret@10.0.0.5:6379/0' });
    expect(bad).toHaveLength(1);
    expect(bad.join('\n')).not.toContain('hunter2-secret');
  });
});
