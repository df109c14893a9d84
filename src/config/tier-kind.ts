import { isLocalBaseUrl } from './rule-checks.js';
import type { Tier } from './schema.js';

/**
 * What llm-route tells people about where a request ran (the start-up notice, the status line,
 * exec's exit summary): `local`, a tier on this machine or the local network without a price
 * (its answers cost nothing); `cloud`, any other — an API off the local network, or any priced
 * tier (its answers cost money).
 */
export type TierKind = 'local' | 'cloud';

export function isPaidTier(tier: Tier): boolean {
  return tier.price !== undefined || !isLocalBaseUrl(tier.provider.base_url);
}

export function tierKind(tier: Tier): TierKind {
  return isPaidTier(tier) ? 'cloud' : 'local';
}
