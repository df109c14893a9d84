import type { Route, Tier } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';

export interface Plan {
  tiers: Tier[];
  /** Every drawn tier is down: they are all tried anyway, without half-open trial claims. */
  allDown: boolean;
}

/**
 * The tiers one request will try, in the route's order (never reordered by speed): each
 * weighted tier draws once and is left out entirely when it loses; tiers whose circuit is
 * open are skipped, unless that would leave nothing, in which case every drawn tier is tried.
 */
export function planTiers(route: Route, gate: Pick<TierGate, 'weight' | 'admit'>, random: () => number = Math.random): Plan {
  const drawn: Tier[] = [];
  for (const tier of route.tiers) {
    if (wins(gate.weight(tier), random)) drawn.push(tier);
  }
  const admitted = drawn.filter((tier) => gate.admit(tier));
  return admitted.length > 0 || drawn.length === 0 ? { tiers: admitted, allDown: false } : { tiers: drawn, allDown: true };
}

function wins(weight: number, random: () => number): boolean {
  if (weight >= 100) return true;
  if (weight <= 0) return false;
  return random() * 100 < weight;
}
