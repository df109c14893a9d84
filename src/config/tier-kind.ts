import { isLocalBaseUrl } from './rule-checks.js';
import type { Tier } from './schema.js';

/**
 * What llm-route tells people about where a request ran (the start-up notice, the status line,
 * exec's exit summary): `local`, a tier on this machine or the local network without a price
 * whose provider has a key of its own or needs none (its answers cost nothing); `cloud`, any
 * other — an API off the local network, any priced tier, or a provider sent the client's own
 * key or login (`api_key: from_client`: the client's account pays, wherever its URL points).
 */
export type TierKind = 'local' | 'cloud';

export function isPaidTier(tier: Tier): boolean {
  return tier.price !== undefined || tier.provider.from_client === true || !isLocalBaseUrl(tier.provider.base_url);
}

export function tierKind(tier: Tier): TierKind {
  return isPaidTier(tier) ? 'cloud' : 'local';
}
