import { z } from '#zod';
import { ms } from './duration-schema.js';

/**
 * A route's learned stall (`on_break: resume` only): a committed stream whose silence exceeds
 * `factor` times its own median gap between content so far, and at least `floor_ms`, once it
 * has shown `after` gaps, is broken and recovered as a break is (docs/recovery.md).
 */
export const StallSchema = z.strictObject({
  /** How many of the stream's own median gaps of silence make a stall: at least 2 (below, ordinary jitter would be one). */
  factor: z.number().min(2).default(20),
  /** The least silence ever called a stall, whatever the pace. */
  floor_ms: ms().default(2_000),
  /** Gaps the stream must have shown before its pace is trusted. */
  after: z.number().int().min(1).default(16),
});

export type StallConfig = z.infer<typeof StallSchema>;

export const DEFAULT_STALL: StallConfig = { factor: 20, floor_ms: 2_000, after: 16 };
