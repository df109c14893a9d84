import type { Tier } from '../config/schema.js';
import type { Discovered } from '../protocols/core/provider-profile.js';
import { profileOf } from '../protocols/profiles.js';

/**
 * What llm-route knows of each tier's model limits (docs/fit.md): what discovery read
 * from its server, and the window a silent truncation taught. Kept per server and model (not
 * per Tier object: a reload makes new ones, and the server's answer still holds).
 */
export type { Discovered };

/** A tier's limits as the fit check uses them; `context` undefined: unknown, no pre-check. */
export interface TierFit {
  context: number | undefined;
  contextSource: 'config' | 'learned' | string | undefined;
  maxPromptTokens: number | undefined;
  vision: boolean | undefined;
  tools: boolean | undefined;
}

const discovered = new Map<string, Discovered>();
const learned = new Map<string, number>();

function keyOf(tier: Tier): string {
  return `${tier.provider.base_url}\u0000${tier.model}`;
}

/** Discovery's latest answer for the tier's server and model (`{}`: it told nothing). Forgets a learned window when it changed. */
export function recordDiscovered(tier: Tier, facts: Discovered): void {
  const key = keyOf(tier);
  const before = discovered.get(key);
  if (before?.context !== facts.context) learned.delete(key);
  discovered.set(key, facts);
}

export function discoveredOf(tier: Tier): Discovered | undefined {
  return discovered.get(keyOf(tier));
}

/** A silent truncation showed the tier reads at most `tokens`: its window until discovery says otherwise. */
export function learnWindow(tier: Tier, tokens: number): void {
  learned.set(keyOf(tier), tokens);
}

/** The tier's limits: the tier file's numbers first, then a learned window, then discovery's. */
export function tierFit(tier: Tier): TierFit {
  const config = tier.fit;
  const key = keyOf(tier);
  const found = discovered.get(key);
  const taught = learned.get(key);
  // Plain assignments, not `[a, b] = [x, y]`: this runs for every tier a request opens.
  let context: number | undefined;
  let contextSource: TierFit['contextSource'];
  let window: number | undefined;
  if (config.context !== 'auto') {
    context = config.context;
    contextSource = 'config';
  } else if (taught !== undefined) {
    context = taught;
    contextSource = 'learned';
  } else if ((window = profileOf(tier.provider).configuredWindow(tier)) !== undefined) {
    context = window;
    contextSource = 'config';
  } else if (found?.context !== undefined) {
    context = found.context;
    contextSource = found.source;
  }
  return {
    context,
    contextSource,
    maxPromptTokens: config.max_prompt_tokens,
    vision: config.vision === 'auto' ? found?.vision : config.vision,
    tools: config.tools === 'auto' ? found?.tools : config.tools,
  };
}

/** For tests: forget everything. */
export function resetTierFacts(): void {
  discovered.clear();
  learned.clear();
}
