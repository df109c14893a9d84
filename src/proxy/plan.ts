import type { Route, Tier } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';

export interface Plan {
  tiers: Tier[];
  /** Every drawn tier is down: they are all tried anyway, without half-open trial claims. */
  allDown: boolean;
  /** The session's tier decided a weighted draw (it won its own, or a weighted tier ahead of it lost its). */
  affinity: boolean;
}

/**
 * The tiers one request will try, in the route's order (never reordered by speed): each
 * weighted tier draws once and is left out entirely when it loses; tiers whose circuit is
 * open are skipped, unless that would leave nothing, in which case every drawn tier is tried.
 * `sessionTier`: the tier that answered the request's session last (asked only when a
 * weighted tier is met): while it is healthy and not switched off, it wins its draw and every
 * weighted tier ahead of it loses its, so no draw moves a session off the tier holding its
 * prompt in cache. Tiers of weight 100 keep their place: affinity never overrides priority.
 */
export function planTiers(route: Route, gate: Pick<TierGate, 'weight' | 'allows'>, random: () => number = Math.random, sessionTier?: () => Tier | null): Plan {
  const drawn: Tier[] = [];
  let kept: number | undefined; // the session tier's index (-1: none); undefined until a weighted tier asks
  let affinity = false;
  for (let i = 0; i < route.tiers.length; i++) {
    const tier = route.tiers[i];
    const weight = gate.weight(tier);
    if (sessionTier && weight > 0 && weight < 100) {
      kept ??= keptIndex(route, gate, sessionTier());
      if (kept >= i) {
        affinity = true;
        if (kept === i) drawn.push(tier);
        continue;
      }
    }
    if (wins(weight, random)) drawn.push(tier);
  }
  const allowed = drawn.filter((tier) => gate.allows(tier));
  return allowed.length > 0 || drawn.length === 0 ? { tiers: allowed, allDown: false, affinity } : { tiers: drawn, allDown: true, affinity };
}

/** Where the session's tier is in the route, if it may take the session now (healthy, weight above 0); else -1. */
function keptIndex(route: Route, gate: Pick<TierGate, 'weight' | 'allows'>, tier: Tier | null): number {
  if (tier === null || gate.weight(tier) <= 0 || !gate.allows(tier)) return -1;
  return route.tiers.indexOf(tier);
}

function wins(weight: number, random: () => number): boolean {
  if (weight >= 100) return true;
  if (weight <= 0) return false;
  return random() * 100 < weight;
}
