import type { Config, Tier } from './schema.js';

/** Every tier of every route, in route order then tier order (each knows its route). */
export function allTiers(config: Config): Tier[] {
  const tiers: Tier[] = [];
  for (const route of config.routes.values()) tiers.push(...route.tiers);
  return tiers;
}

const takesCredentials = new WeakMap<Config, boolean>();

/**
 * Whether a provider of the tier file takes the client's own credential (`api_key: from_client`):
 * only then is a request's credential taken at ingress. Worked out once per loaded config.
 */
export function takesClientCredentials(config: Config): boolean {
  let takes = takesCredentials.get(config);
  if (takes === undefined) {
    takes = [...config.providers.values()].some((provider) => provider.from_client === true);
    takesCredentials.set(config, takes);
  }
  return takes;
}
