import { z } from 'zod';

/**
 * The tier file's schema: the one source of config types. Every object is strict,
 * so an unknown key is an error (the loader turns it into "did you mean").
 */

const ms = (min = 1) => z.number().int().min(min);

export const TimeoutsSchema = z.strictObject({
  connect_ms: ms().optional(),
  ttft_ms: ms().optional(),
  idle_ms: ms().optional(),
  total_ms: ms().optional(),
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

/** Active health checks of a provider (off unless `interval_ms` is set) and the warm-up of local ones. */
export const ProviderHealthSchema = z.strictObject({
  interval_ms: ms().optional(),
  timeout_ms: ms().default(2_000),
  /** Also send a 1-token request and measure its TTFT. */
  ttft_check: z.boolean().default(false),
  /** A 1-token request at start and every keepalive_ms so a local model stays loaded (default: on for loopback base URLs). */
  warmup: z.boolean().optional(),
  keepalive_ms: ms().default(240_000),
});

/** A command that starts a local provider when it does not answer at `serve` start. */
export const StartSchema = z.strictObject({
  command: z.string().min(1),
  ready_timeout_ms: ms().default(60_000),
});

export const RetrySchema = z.strictObject({
  attempts: z.number().int().min(1).max(10).optional(),
  base_ms: ms(0).optional(),
  max_ms: ms(0).optional(),
});

export const ServerSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(4141),
  auth_token: z.string().optional(),
  /** Lets /admin be used from other hosts when presented as a Bearer token. */
  admin_token: z.string().optional(),
  max_body_bytes: z.number().int().min(1).default(10 * 1024 * 1024),
});

/** USD per million tokens; `cached_input_per_mtok` defaults to the input price. */
export const PriceSchema = z.strictObject({
  input_per_mtok: z.number().min(0),
  output_per_mtok: z.number().min(0),
  cached_input_per_mtok: z.number().min(0).optional(),
});

/** The usage log (SQLite): on by default; `path` defaults to the state dir, relative to the tier file's folder. */
export const UsageSchema = z.strictObject({
  path: z.string().min(1).optional(),
  retention_days: z.number().int().min(1).default(90),
  enabled: z.boolean().default(true),
});

/** A spending cap per provider or route and per UTC day or month, in USD or tokens (exactly one; checked in budget-checks). */
export const BudgetSchema = z.strictObject({
  scope: z.string().min(1),
  per: z.enum(['day', 'month']),
  usd: z.number().positive('expected a positive number').optional(),
  tokens: z.number().int().min(1).optional(),
});

export const ProviderSchema = z.strictObject({
  type: z.enum(['openai']),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  api_key: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  health: ProviderHealthSchema.optional(),
  start: StartSchema.optional(),
  price: PriceSchema.optional(),
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
  /** Replaces the provider's price for this tier. */
  price: PriceSchema.optional(),
});

export const RouteSchema = z.strictObject({
  tiers: z.array(TierSchema).min(1, 'a route needs at least one tier'),
  timeouts: TimeoutsSchema.optional(),
  retry: RetrySchema.optional(),
  circuit: CircuitSchema.optional(),
  deadline_ms: ms().default(120_000),
});

export const ConfigSchema = z.strictObject({
  version: z.literal(1, 'expected version: 1'),
  server: ServerSchema.default({ host: '127.0.0.1', port: 4141, max_body_bytes: 10 * 1024 * 1024 }),
  providers: z.record(z.string(), ProviderSchema),
  routes: z.record(z.string(), RouteSchema),
  usage: UsageSchema.optional(),
  budgets: z.array(BudgetSchema).optional(),
});

export type RawConfig = z.infer<typeof ConfigSchema>;
export type ServerConfig = z.infer<typeof ServerSchema>;
export type ProviderConfig = z.infer<typeof ProviderSchema>;
export type TimeoutsConfig = z.infer<typeof TimeoutsSchema>;
export type RetryConfig = z.infer<typeof RetrySchema>;
export type CircuitConfig = z.infer<typeof CircuitSchema>;
export type RollbackConfig = z.infer<typeof RollbackSchema>;
export type ProviderHealthConfig = z.infer<typeof ProviderHealthSchema>;
export type Price = z.infer<typeof PriceSchema>;
export type BudgetConfig = z.infer<typeof BudgetSchema>;

/** cold_ttft_ms defaults to the tier's ttft_ms (no separate cold budget) when unset. */
export const DEFAULT_TIMEOUTS: Required<Omit<TimeoutsConfig, 'cold_ttft_ms'>> = {
  connect_ms: 2_000,
  ttft_ms: 10_000,
  idle_ms: 30_000,
  total_ms: 300_000,
  cold_after_ms: 300_000, // Ollama unloads an idle model after 5 minutes by default
};

export const DEFAULT_CIRCUIT: Required<Omit<CircuitConfig, 'slow_ttft_ms'>> = { failures: 3, cooldown_ms: 1_000, max_cooldown_ms: 8_000 };

export const DEFAULT_RETRY: Required<RetryConfig> = { attempts: 2, base_ms: 250, max_ms: 4_000 };

/** A provider after loading: its name is known and its secrets are resolved. */
export interface Provider extends Omit<ProviderConfig, 'health'> {
  name: string;
  /** The base URL is on this machine (loopback): a local model server. */
  local: boolean;
  health: Required<Omit<ProviderHealthConfig, 'interval_ms'>> & { interval_ms: number | undefined };
}

/** A tier after loading: defaults merged, provider resolved, name unique in its route. */
export interface Tier {
  route: string;
  name: string;
  index: number;
  provider: Provider;
  model: string;
  weight: number;
  timeouts: Required<TimeoutsConfig>;
  retry: Required<RetryConfig>;
  circuit: Required<CircuitConfig>;
  rollback: RollbackConfig | null;
  /** USD per 1M tokens: the tier's own `price`, else its provider's; absent: unpriced (local). */
  price?: Price;
}

export interface Route {
  name: string;
  tiers: Tier[];
  deadline_ms: number;
}

/** The usage log after loading: `path` is absolute, or null for the default in the state dir (see usage/paths.ts). */
export interface UsageConfig {
  path: string | null;
  retention_days: number;
  enabled: boolean;
}

/** A budget after loading: one unit, its limit in that unit. */
export interface Budget {
  scope: string;
  per: 'day' | 'month';
  unit: 'usd' | 'tokens';
  limit: number;
}

/** The config the running proxy uses. */
export interface Config {
  file: string;
  server: ServerConfig;
  providers: Map<string, Provider>;
  routes: Map<string, Route>;
  usage: UsageConfig;
  budgets: Budget[];
}
