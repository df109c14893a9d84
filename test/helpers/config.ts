import { ConfigError, type ConfigProblem } from '../../src/config/errors.js';
import { loadConfigText } from '../../src/config/load.js';
import type { Provider, Route, Tier } from '../../src/config/schema.js';
import { DEFAULT_CIRCUIT, DEFAULT_RETRY, DEFAULT_TIMEOUTS, ProviderHealthSchema } from '../../src/config/schema.js';

const provider: Provider = {
  name: 'p',
  type: 'openai',
  base_url: 'http://127.0.0.1:1/v1',
  local: true,
  health: { ...ProviderHealthSchema.parse({}), interval_ms: undefined, warmup: false },
};

/** A resolved tier for unit tests that do not go through the loader. */
export function tier(name: string, fields: Partial<Tier> = {}): Tier {
  return {
    route: 'chat',
    name,
    index: 0,
    provider,
    model: `${name}-model`,
    weight: 100,
    timeouts: { ...DEFAULT_TIMEOUTS, cold_ttft_ms: DEFAULT_TIMEOUTS.ttft_ms },
    retry: { ...DEFAULT_RETRY },
    circuit: { ...DEFAULT_CIRCUIT, slow_ttft_ms: 8000 },
    rollback: null,
    tokenizer: 'o200k_base',
    max_tokens: 4096,
    max_tokens_cap: undefined,
    ollama: {},
    prefill: true,
    warm: false,
    fit: { context: 'auto', max_prompt_tokens: undefined, vision: 'auto', tools: 'auto' },
    ...fields,
  };
}

export function route(tiers: Tier[], name = 'chat'): Route {
  return {
    name,
    tiers: tiers.map((t, index) => ({ ...t, index, route: name })),
    deadline_ms: 120_000,
    aliases: [],
    savers: [],
    on_break: 'error',
    resume_max: 1,
    stall: { factor: 20, floor_ms: 2_000, after: 16 },
    hedge_ms: null,
  };
}

/** The problems a tier file's text is rejected with (throws when it loads). */
export function problemsOf(text: string, env: Record<string, string> = {}): ConfigProblem[] {
  try {
    loadConfigText(text, 'llm-route.yaml', env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected the config to be rejected');
}
