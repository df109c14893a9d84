import { z } from '#zod';
import { ms } from './duration-schema.js';

// What llm-route keeps: the usage log, budgets, idempotency records, state shared between instances.

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

/** Idempotency-Key records: how long a completed answer is kept, how long a duplicate waits for a running one. */
export const IdempotencySchema = z.strictObject({
  ttl_s: z.number().int().min(1).default(86_400),
  wait_ms: ms(0).default(120_000),
});

/** Shared state for several instances: Redis holds idempotency records, limit buckets, budgets and overrides. */
export const StateSchema = z.strictObject({
  redis: z.url({ protocol: /^rediss?$/, error: 'expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0' }).optional(),
  prefix: z.string().min(1).default('llm-route:'),
});

export type BudgetConfig = z.infer<typeof BudgetSchema>;
export type IdempotencyConfig = z.infer<typeof IdempotencySchema>;
export type StateConfig = z.infer<typeof StateSchema>;
