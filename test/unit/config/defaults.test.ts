import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { DEFAULT_TIMEOUTS, ProviderHealthSchema, ServerSchema } from '../../../src/config/schema.js';

const MINIMAL = `version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  cloud: { type: openai, base_url: "https://api.example.com/v1", health: { interval_ms: 5000 } }
routes:
  chat:
    tiers:
      - { provider: local, model: m }
      - { provider: cloud, model: m }
`;

describe('defaults come from the schema alone', () => {
  const config = loadConfigText(MINIMAL, '/t/llm-route.yaml', {});

  it('server: the ServerSchema defaults, when the block is absent', () => {
    expect(config.server).toEqual(ServerSchema.parse({}));
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 4141,
      max_body_bytes: 10 * 1024 * 1024,
      max_header_bytes: 16_384,
      request_timeout_ms: 30_000,
      max_streams: 1000,
      allowed_hosts: [],
      cors_origins: [],
    });
  });

  it('provider health: the ProviderHealthSchema defaults, absent or partly given; warm-up on for loopback', () => {
    const defaults = ProviderHealthSchema.parse({});
    expect(config.providers.get('local')?.health).toEqual({ ...defaults, interval_ms: undefined, warmup: true });
    expect(config.providers.get('cloud')?.health).toEqual({ ...defaults, interval_ms: 5000, warmup: false });
    expect(defaults).toEqual({ timeout_ms: 2_000, ttft_check: false, keepalive_ms: 240_000 });
  });

  it('tier timeouts: DEFAULT_TIMEOUTS, with the cold budget equal to ttft_ms', () => {
    const tier = config.routes.get('chat')?.tiers[0];
    expect(tier?.timeouts).toEqual({ ...DEFAULT_TIMEOUTS, cold_ttft_ms: DEFAULT_TIMEOUTS.ttft_ms });
    expect(config.routes.get('chat')?.deadline_ms).toBe(120_000);
  });
});
