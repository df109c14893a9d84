import type { Config, Route } from '../config/schema.js';
import type { TierGate } from '../health/health-view.js';
import { discoveredOf, tierFit } from '../fit/tier-facts.js';
import type { CatalogModel, ModelCatalog } from '../protocols/core/endpoints.js';
import { isLocalTier, localOnly } from '../rules/local-only.js';
import { profileOf } from '../protocols/profiles.js';

/** What a route can do, from what llm-route knows of the tiers that may answer it (a local-only route's local ones). */
export interface RouteFacts {
  /** The largest window among them: a request too long for the smaller tiers skips them (route by fit). */
  context: number | undefined;
  /** The largest answer cap (`max_tokens`) among them when each has one; undefined when one answers uncapped. */
  output: number | undefined;
  /** Some tier carries tools: none is known not to (a call written as text is recovered on any tier). */
  tools: boolean;
  /** Some tier takes images: the tier file or discovery says so, or a cloud tier nothing says cannot. */
  vision: boolean;
  /** Some tier reasons: discovery says so (Ollama's `thinking`), or its provider's models do (Claude's extended thinking). */
  thinking: boolean;
}

export function routeFacts(route: Route): RouteFacts {
  const tiers = route.local_only ? localOnly(route).tiers : route.tiers;
  const facts: RouteFacts = { context: undefined, output: undefined, tools: false, vision: false, thinking: false };
  let capped = tiers.length > 0;
  for (const tier of tiers) {
    if (tier.max_tokens_cap === undefined) capped = false;
    else if (facts.output === undefined || tier.max_tokens_cap > facts.output) facts.output = tier.max_tokens_cap;
    const fit = tierFit(tier);
    if (fit.context !== undefined && (facts.context === undefined || fit.context > facts.context)) facts.context = fit.context;
    if (fit.tools !== false) facts.tools = true;
    // A local server says what its model takes (discovery); a hosted model commonly takes images.
    if (fit.vision === true || (fit.vision === undefined && !isLocalTier(tier))) facts.vision = true;
    if (discoveredOf(tier)?.thinking === true || profileOf(tier.provider).reasons) facts.thinking = true;
  }
  if (!capped) facts.output = undefined;
  return facts;
}

/**
 * The routes as models, for clients that list them (Ollama's /api/tags, /api/show, /api/ps):
 * each route, and each alias that is a plain name (a glob names no one model), with the route's
 * facts; `loaded` when the route's first tier is warm now (its server lists the model as loaded,
 * or it answered lately).
 */
export function modelCatalog(config: Config, gate: Pick<TierGate, 'isCold'>, startedAt: number): ModelCatalog {
  const models: CatalogModel[] = [];
  const seen = new Set<string>();
  for (const route of config.routes.values()) {
    const facts = routeFacts(route);
    const first = route.tiers[0];
    const loaded = first !== undefined && !gate.isCold(first);
    for (const name of [route.name, ...route.aliases.filter(isPlainName)]) {
      if (seen.has(name)) continue;
      seen.add(name);
      models.push(route.embedding ? { name, ...facts, tools: false, vision: false, thinking: false, loaded, embedding: true } : { name, ...facts, loaded });
    }
  }
  return { startedAt, models };
}

function isPlainName(alias: string): boolean {
  return !/[*?[\]{}]/.test(alias);
}
