import type { Config, Price } from '../config/schema.js';
import { tierKind } from '../config/tier-kind.js';
import { costUsd, type TokenCounts } from './cost.js';

/** Prices by route and tier, plain data: the usage engine's copy, replaced on a reload. */
export interface PriceBook {
  /** route → tier → the tier's price (absent: unpriced). */
  tiers: Record<string, Record<string, Price>>;
  /** route → the price of its first priced tier, what local traffic is saved against. */
  firstPriced: Record<string, Price>;
  /** route → its local tiers (config/tier-kind.ts), the only ones whose answers save anything. */
  local: Record<string, Record<string, true>>;
}

export function priceBook(config: Config): PriceBook {
  const book: PriceBook = { tiers: {}, firstPriced: {}, local: {} };
  for (const route of config.routes.values()) {
    const tiers: Record<string, Price> = {};
    const local: Record<string, true> = {};
    for (const tier of route.tiers) {
      if (tierKind(tier) === 'local') local[tier.name] = true;
      if (!tier.price) continue;
      tiers[tier.name] = tier.price;
      book.firstPriced[route.name] ??= tier.price;
    }
    book.tiers[route.name] = tiers;
    book.local[route.name] = local;
  }
  return book;
}

/**
 * What one answered request cost (at its tier's price) and saved (a local tier's tokens at the
 * route's first priced tier; an unpriced cloud tier, such as one sent the client's own login,
 * saves nothing). Both 0 when no tier answered: failed attempts are never billed.
 */
export function priceRequest(book: PriceBook, route: string, tier: string | null, tokens: TokenCounts): { cost: number; saved: number } {
  if (tier === null) return { cost: 0, saved: 0 };
  const price = book.tiers[route]?.[tier];
  if (price) return { cost: costUsd(price, tokens), saved: 0 };
  if (book.local[route]?.[tier] !== true) return { cost: 0, saved: 0 };
  const reference = book.firstPriced[route];
  return { cost: 0, saved: reference ? costUsd(reference, tokens) : 0 };
}
