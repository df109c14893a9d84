import type { Route, Tier } from '../config/schema.js';
import type { HealthView } from '../health/health-view.js';

/**
 * The tiers one request will try, in the route's order (never reordered by speed):
 * each weighted tier draws once and is left out entirely when it loses; tiers that are down
 * are skipped unless every remaining tier is down.
 */
export function planTiers(route: Route, health: HealthView, random: () => number = Math.random): Tier[] {
  const drawn: Tier[] = [];
  for (const tier of route.tiers) {
    if (wins(tier.weight, random)) drawn.push(tier);
  }
  let up: Tier[] | null = null;
  for (let i = 0; i < drawn.length; i++) {
    const down = health.state(route.name, drawn[i].name) === 'down';
    if (down && up === null) up = drawn.slice(0, i);
    else if (!down && up !== null) up.push(drawn[i]);
  }
  if (up === null) return drawn; // nothing is down
  return up.length > 0 ? up : drawn;
}

function wins(weight: number, random: () => number): boolean {
  if (weight >= 100) return true;
  if (weight <= 0) return false;
  return random() * 100 < weight;
}
