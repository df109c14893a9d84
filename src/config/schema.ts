import { z } from '#zod';
import { ms } from './duration-schema.js';
import { ProviderSchema } from './provider-schema.js';
import { RuleSchema } from './rule-schema.js';
import { SaverListSchema } from './saver-options.js';
import { ServerSchema } from './server-schema.js';
import { StallSchema } from './stall-schema.js';
import { BudgetSchema, IdempotencySchema, StateSchema, UsageSchema } from './stores-schema.js';
import { TelemetrySchema } from './telemetry-schema.js';
import { CircuitSchema, RetrySchema, TierSchema, TimeoutsSchema } from './tier-schema.js';

/**
 * The tier file's schema: the one source of config types. Every object is strict,
 * so an unknown key is an error (the loader turns it into "did you mean"). The sections
 * live in their own files; this module is the one place to import them from.
 */
export * from './provider-schema.js';
export * from './rule-schema.js';
export * from './saver-options.js';
export * from './server-schema.js';
export * from './stall-schema.js';
export * from './stores-schema.js';
export * from './telemetry-schema.js';
export * from './tier-schema.js';
export type * from './loaded-config.js';

export const RouteSchema = z.strictObject({
  /** What the route answers: chat and generation (the default), or embeddings (docs/embeddings.md). */
  kind: z.enum(['chat', 'embeddings']).default('chat'),
  /** An embeddings route: the vector space every tier shares (default: the first tier's space, which defaults to its model). */
  space: z.string().min(1).optional(),
  tiers: z.array(TierSchema).min(1, 'a route needs at least one tier'),
  /** Other model names this route answers to, as globs (`claude-*`); the exact route name wins first. */
  aliases: z.array(z.string().min(1)).optional(),
  timeouts: TimeoutsSchema.optional(),
  retry: RetrySchema.optional(),
  circuit: CircuitSchema.optional(),
  deadline_ms: ms().default(120_000),
  savers: SaverListSchema.optional(),
  /** A committed stream that breaks or stalls: `error` ends it with the protocol's error event; `resume` resumes it on the next tier (src/proxy/resume/). */
  on_break: z.enum(['error', 'resume']).default('error'),
  resume: z.strictObject({ max: z.number().int().min(0).max(1).default(1) }).optional(),
  /** With on_break: resume, a committed stream silent far longer than its own pace is broken (docs/resume.md#a-stall-judged-by-the-streams-own-pace). */
  stall: StallSchema.optional(),
  /** Streams: when the tier being tried has no first content this many ms after it started, the next tier starts too (src/proxy/hedging/). */
  hedge_ms: ms().optional(),
  /** No tier whose provider is off the local network is ever sent this route's requests (fails closed: 503 no_local_tier). */
  local_only: z.boolean().optional(),
});

export const ConfigSchema = z.strictObject({
  version: z.literal(1, 'expected version: 1'),
  server: ServerSchema.prefault({}),
  providers: z.record(z.string(), ProviderSchema),
  routes: z.record(z.string(), RouteSchema),
  /** The route of a request whose `model` is missing or names no route or alias. */
  default_route: z.string().min(1).optional(),
  /** Routing by purpose: the first rule whose `when` holds names the route; none: the request's model, as without rules. */
  rules: z.array(RuleSchema).optional(),
  /** The savers of every route without a `savers:` of its own. */
  savers: SaverListSchema.optional(),
  usage: UsageSchema.optional(),
  budgets: z.array(BudgetSchema).optional(),
  idempotency: IdempotencySchema.prefault({}),
  state: StateSchema.prefault({}),
  /** Traces: where spans go over OTLP/HTTP; absent: the OTEL_EXPORTER_OTLP_* variables, else none. */
  telemetry: TelemetrySchema.optional(),
});

export type RawConfig = z.infer<typeof ConfigSchema>;
