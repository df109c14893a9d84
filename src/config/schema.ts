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
  max_body_bytes: z.number().int().min(1).default(10 * 1024 * 1024),
});

export const ProviderSchema = z.strictObject({
  type: z.enum(['openai']),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  api_key: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
});

export const TierSchema = z.strictObject({
  name: z.string().min(1).optional(),
  provider: z.string().min(1),
  model: z.string().min(1),
  timeouts: TimeoutsSchema.optional(),
  weight: z.number().min(0).max(100).default(100),
  retry: RetrySchema.optional(),
});

export const RouteSchema = z.strictObject({
  tiers: z.array(TierSchema).min(1, 'a route needs at least one tier'),
  timeouts: TimeoutsSchema.optional(),
  retry: RetrySchema.optional(),
  deadline_ms: ms().default(120_000),
});

export const ConfigSchema = z.strictObject({
  version: z.literal(1, 'expected version: 1'),
  server: ServerSchema.default({ host: '127.0.0.1', port: 4141, max_body_bytes: 10 * 1024 * 1024 }),
  providers: z.record(z.string(), ProviderSchema),
  routes: z.record(z.string(), RouteSchema),
});

export type RawConfig = z.infer<typeof ConfigSchema>;
export type ServerConfig = z.infer<typeof ServerSchema>;
export type ProviderConfig = z.infer<typeof ProviderSchema>;
export type TimeoutsConfig = z.infer<typeof TimeoutsSchema>;
export type RetryConfig = z.infer<typeof RetrySchema>;

export const DEFAULT_TIMEOUTS: Required<TimeoutsConfig> = {
  connect_ms: 2_000,
  ttft_ms: 10_000,
  idle_ms: 30_000,
  total_ms: 300_000,
};

export const DEFAULT_RETRY: Required<RetryConfig> = { attempts: 2, base_ms: 250, max_ms: 4_000 };

/** A provider after loading: its name is known and its secrets are resolved. */
export interface Provider extends ProviderConfig {
  name: string;
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
}

export interface Route {
  name: string;
  tiers: Tier[];
  deadline_ms: number;
}

/** The config the running proxy uses. */
export interface Config {
  file: string;
  server: ServerConfig;
  providers: Map<string, Provider>;
  routes: Map<string, Route>;
}
