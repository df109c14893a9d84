import type { Tier } from '../../config/schema.js';

/** A request's max tokens as `tier` takes them: cut to the tier's `max_tokens` when it sets one. */
export function capTokens(asked: number | undefined, tier: Tier): number | undefined {
  if (asked === undefined || tier.max_tokens_cap === undefined) return asked;
  return Math.min(asked, tier.max_tokens_cap);
}

/** The same, on a relayed body's own field(s), when the tier sets a cap (no copy otherwise). */
export function capBodyTokens(body: Record<string, unknown>, fields: readonly string[], tier: Tier): void {
  if (tier.max_tokens_cap === undefined) return;
  for (const field of fields) {
    const value = body[field];
    if (typeof value === 'number' && value > tier.max_tokens_cap) body[field] = tier.max_tokens_cap;
  }
}
