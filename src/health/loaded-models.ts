import type { Tier } from '../config/schema.js';
import type { ServerWord } from '../protocols/core/provider-profile.js';
import { profileOf } from '../protocols/profiles.js';
import type { Http } from './deadline.js';
import { askServer } from './upstream-models.js';

/**
 * Whether a tier's model is in its server's memory, in the server's own words (docs/hedging.md): Ollama `GET /api/ps`, llama-swap `GET /running`
 * (`ready` loaded, `starting` still loading), llama.cpp's router mode `GET /models`
 * (`status.value`), LM Studio `GET /api/v0/models` (`state`). Kept per server and model, read
 * only off the request path (discovery, health checks, the refresh while requests arrive).
 */
const said = new Map<string, boolean>();

function keyOf(tier: Tier): string {
  return `${tier.provider.base_url}\u0000${tier.model}`;
}

/** undefined: the server said nothing (the cold_after_ms guess stands). */
export function loadedOf(tier: Tier): boolean | undefined {
  return said.get(keyOf(tier));
}

export function recordLoaded(tier: Tier, loaded: boolean | undefined): void {
  if (loaded === undefined) said.delete(keyOf(tier));
  else said.set(keyOf(tier), loaded);
}

/** For tests: forget everything. */
export function resetLoadedModels(): void {
  said.clear();
}

/** Which server said it, and what: whether the tier's model is loaded. */
export type { ServerWord };

/**
 * Asks the tier's server whether its model is loaded; undefined when it documents none of
 * these (a cloud API is not asked). Throws what the request threw (a timeout, a refused connection).
 */
export async function readLoaded(tier: Tier, http: Http): Promise<boolean | undefined> {
  return (await readServerWord(tier, http))?.loaded;
}

/** The server's own word, as its provider's profile reads it. */
export function readServerWord(tier: Tier, http: Http): Promise<ServerWord | undefined> {
  return profileOf(tier.provider).loadedState(tier, askServer(tier.provider, http));
}
