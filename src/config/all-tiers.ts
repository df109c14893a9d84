import type { Config, Tier } from './schema.js';

/** Every tier of every route, in route order then tier order (each knows its route). */
export function allTiers(config: Config): Tier[] {
  const tiers: Tier[] = [];
  for (const route of config.routes.values()) tiers.push(...route.tiers);
  return tiers;
}
