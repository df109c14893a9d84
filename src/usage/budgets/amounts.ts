import type { Tier } from '../../config/schema.js';
import type { Usage } from '../../protocols/core/usage.js';
import { costUsd } from '../cost.js';
import type { BudgetAmount } from './ledger.js';

/** SPEC: without the request's own max tokens, the tier's `max_tokens`, else 4096. */
export const DEFAULT_MAX_TOKENS = 4096;

/** The budget scopes a try at this tier counts against: its route and its provider. */
export function budgetScopes(tier: Pick<Tier, 'route' | 'provider'>): string[] {
  return [`route:${tier.route}`, `provider:${tier.provider.name}`];
}

/** What a tier's hold reserves: the prompt estimate plus every token the answer may have, priced at the tier's price (0 USD when unpriced). */
export function worstCase(tier: Pick<Tier, 'price'>, promptTokens: number, maxTokens: number = DEFAULT_MAX_TOKENS): BudgetAmount {
  return {
    tokens: promptTokens + maxTokens,
    usd: tier.price ? costUsd(tier.price, { prompt: promptTokens, completion: maxTokens, cached: 0 }) : 0,
  };
}

/** What a request really spent, as the upstream reported it (or as estimated); nothing when no tier answered. */
export function actualSpend(tier: Pick<Tier, 'price'> | null, usage: Usage | undefined): BudgetAmount {
  if (!tier || !usage) return { tokens: 0, usd: 0 };
  const tokens = { prompt: usage.prompt_tokens, completion: usage.completion_tokens, cached: usage.cached_tokens ?? 0 };
  return { tokens: tokens.prompt + tokens.completion, usd: tier.price ? costUsd(tier.price, tokens) : 0 };
}
