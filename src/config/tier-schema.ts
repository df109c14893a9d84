import { z } from '#zod';
import { ENCODINGS } from '../tokens/count.js';
import { ms } from './duration-schema.js';
import { OllamaOptionsSchema, PriceSchema } from './provider-schema.js';

// A route's tiers: timeouts, retries, the circuit breaker, rollback, fit; and their defaults.

export const TimeoutsSchema = z.strictObject({
  connect_ms: ms().optional(),
  ttft_ms: ms().optional(),
  idle_ms: ms().optional(),
  total_ms: ms().optional(),
  /** Opt-in wall-clock cap on a streaming attempt, start to last byte, however it flows (0: none, the default). */
  stream_max_ms: ms(0).optional(),
  /** TTFT budget for the first request after the tier was idle `cold_after_ms` (a model load). */
  cold_ttft_ms: ms().optional(),
  cold_after_ms: ms().optional(),
});

/** The circuit breaker of a tier: consecutive failures open it for a cooldown that doubles per trip. */
export const CircuitSchema = z.strictObject({
  failures: z.number().int().min(1).optional(),
  cooldown_ms: ms().optional(),
  max_cooldown_ms: ms().optional(),
  /** A TTFT median above this marks the tier degraded (default: 80% of ttft_ms). */
  slow_ttft_ms: ms().optional(),
});

/** Automated rollback: a breach of either threshold over the window sets the tier's weight to 0. */
export const RollbackSchema = z.strictObject({
  ttft_p99_ms: ms().optional(),
  error_rate: z.number().min(0).max(1).optional(),
  window_s: z.number().int().min(1).default(60),
  min_requests: z.number().int().min(1).default(20),
  restore_after_s: z.number().int().min(1).optional(),
});

export const RetrySchema = z.strictObject({
  attempts: z.number().int().min(1).max(10).optional(),
  base_ms: ms(0).optional(),
  max_ms: ms(0).optional(),
});

export const TierSchema = z.strictObject({
  name: z.string().min(1).optional(),
  provider: z.string().min(1),
  model: z.string().min(1),
  timeouts: TimeoutsSchema.optional(),
  weight: z.number().min(0).max(100).default(100),
  retry: RetrySchema.optional(),
  circuit: CircuitSchema.optional(),
  rollback: RollbackSchema.optional(),
  /**
   * The most a request may ask of this tier (larger asks are cut to it: Claude Code asks for
   * 128k), and the max_tokens of a request that sets none where the protocol needs one (Anthropic).
   */
  max_tokens: z.number().int().min(1).optional(),
  ollama: OllamaOptionsSchema.optional(),
  /** The encoding token savers measure with when this is the route's first tier. */
  tokenizer: z.enum(ENCODINGS).optional(),
  /** Replaces the provider's price for this tier. */
  price: PriceSchema.optional(),
  /** Takes a trailing assistant message as the start of its answer (mid-stream resume continues there); default by type, see load.ts. */
  prefill: z.boolean().optional(),
  /** `serve` and `exec` ask the tier's server to load its model at start (src/health/warm-models.ts). */
  warm: z.boolean().optional(),
  /** Route by fit (src/fit/): the model's context window in tokens; auto = discovered from the server. */
  context: z.union([z.literal('auto'), z.number().int().min(1)]).optional(),
  /** The user's cap: a prompt of more tokens skips this tier (a slow prefill). */
  max_prompt_tokens: z.number().int().min(1).optional(),
  /** Whether the model takes images / tools; auto = discovered (unknown: sent). */
  vision: z.union([z.literal('auto'), z.boolean()]).optional(),
  tools: z.union([z.literal('auto'), z.boolean()]).optional(),
  /** Tool calls the model writes as text (src/tool-text/): auto recovers them when the request has tools; off relays the text as is. */
  tool_text: z.enum(['auto', 'off']).optional(),
  /** An embeddings route's tier: the vector space its model answers in (default: its model name; docs/embeddings.md). */
  space: z.string().min(1).optional(),
  /** An embeddings route's tier: the most inputs one request to it carries; a larger batch is split (default by type: its profile's). */
  max_batch: z.number().int().min(1).optional(),
});

export type TimeoutsConfig = z.infer<typeof TimeoutsSchema>;
export type RetryConfig = z.infer<typeof RetrySchema>;
export type CircuitConfig = z.infer<typeof CircuitSchema>;
export type RollbackConfig = z.infer<typeof RollbackSchema>;

/** max_tokens for Anthropic requests that set none (the API requires one). */
export const DEFAULT_MAX_TOKENS = 4096;

/** cold_ttft_ms defaults to the tier's ttft_ms (no separate cold budget) when unset. */
export const DEFAULT_TIMEOUTS: Required<Omit<TimeoutsConfig, 'cold_ttft_ms'>> = {
  connect_ms: 2_000,
  ttft_ms: 10_000,
  idle_ms: 30_000,
  total_ms: 300_000,
  stream_max_ms: 0,
  cold_after_ms: 300_000, // Ollama unloads an idle model after 5 minutes by default
};

export const DEFAULT_CIRCUIT: Required<Omit<CircuitConfig, 'slow_ttft_ms'>> = { failures: 3, cooldown_ms: 1_000, max_cooldown_ms: 8_000 };

export const DEFAULT_RETRY: Required<RetryConfig> = { attempts: 2, base_ms: 250, max_ms: 4_000 };
