import type { Config, Limits, Route, Tier } from '../config/schema.js';
import { capTokens } from '../protocols/translate/max-tokens.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { Usage } from '../protocols/core/usage.js';
import type { LimitLease, StateBackend } from '../state/types.js';
import { actualSpend, budgetScopes, worstCase } from '../usage/budgets/amounts.js';
import { ClientLifetime } from '../util/client-lifetime.js';
import { askedMaxTokens, promptEstimate, usedTokens } from '../protocols/core/prompt-tokens.js';

/** What stands between a request and a tier: its provider's limits, budgets on its scopes. */
interface TierRules {
  limits: Limits | undefined;
  /** The tier's scopes, when a budget covers one of them. */
  budgetScopes: string[] | null;
}

const rulesOf = new WeakMap<Tier, TierRules | null>();
const routeHasRules = new WeakMap<Route, boolean>();

/** A tier's rules under its config (remembered: configs are immutable snapshots); null: nothing to hold. */
function tierRules(tier: Tier, config: Config): TierRules | null {
  let rules = rulesOf.get(tier);
  if (rules === undefined) {
    const scopes = budgetScopes(tier);
    const budgeted = config.budgets.some((budget) => scopes.includes(budget.scope));
    const limits = tier.provider.limits;
    rules = limits || budgeted ? { limits, budgetScopes: budgeted ? scopes : null } : null;
    rulesOf.set(tier, rules);
  }
  return rules;
}

export type TierReservation =
  | { ok: true }
  /** Skipped: llm-route's own limit or budget said no; `retryAfterMs` is when it should say yes. */
  | { ok: false; outcome: 'budget' | 'rate_limited'; retryAfterMs: number; waitedMs: number; message: string }
  | { ok: false; outcome: 'aborted' };

/** The tier that answered and what it used: the upstream's usage, else its answer's text to estimate from. */
export interface Answered {
  tier: Tier;
  usage: Usage | undefined;
  completionText: () => string;
}

interface Held {
  tier: Tier;
  budget: string | null;
  lease: LimitLease | null;
}

/**
 * One request's holds at each tier it tries: before the tier's first attempt, its worst
 * case is reserved on the tier's budgets and room is taken at its provider (waiting up to
 * queue_ms); the tier that answers settles to what it really used, every other tier gives
 * back what it held. Made only for routes where some tier has limits or budgets, so a
 * request on any other route pays nothing.
 */
export class RequestHolds {
  private readonly held = new Map<Tier, Held>();
  private prompt: number | undefined;

  private constructor(
    private readonly state: StateBackend,
    private readonly config: Config,
    private readonly request: ClientRequest,
  ) {}

  static for(route: Route, config: Config, state: StateBackend, request: ClientRequest): RequestHolds | null {
    let has = routeHasRules.get(route);
    if (has === undefined) routeHasRules.set(route, (has = route.tiers.some((tier) => tierRules(tier, config) !== null)));
    return has ? new RequestHolds(state, config, request) : null;
  }

  /** Before the tier's first attempt. `maxWaitMs` caps the queue wait (a stream's deadline). */
  async reserve(tier: Tier, client: ClientLifetime, maxWaitMs = Infinity): Promise<TierReservation> {
    const rules = tierRules(tier, this.config);
    if (!rules) return { ok: true };
    const prompt = this.promptTokens();
    const maxTokens = capTokens(askedMaxTokens(this.request), tier) ?? tier.max_tokens;
    // Both asked at once (one round trip); a refused budget ends the limit's wait at once.
    const waiting = new ClientLifetime();
    const forward = (): void => waiting.abort(client.reason);
    client.onAbort(forward);
    const reservation = rules.budgetScopes ? this.state.budgets.reserve(rules.budgetScopes, worstCase(tier, prompt, maxTokens)) : null;
    const limits = rules.limits;
    const grant = limits
      ? this.state.limits.acquire(
          {
            provider: tier.provider.name,
            limits,
            tokens: limits.tpm ? prompt + maxTokens : 0,
            slot: limits.concurrency !== undefined,
            slotMs: slotLifetimeMs(tier),
            maxWaitMs: Math.max(0, Math.min(limits.queue_ms, maxWaitMs)),
          },
          waiting,
        )
      : null;
    const budget = reservation ? await reservation : null;
    if (budget && !budget.ok) waiting.abort();
    const limit = grant ? await grant : null;
    client.offAbort(forward);

    const held: Held = { tier, budget: budget?.ok ? budget.id : null, lease: limit?.ok ? limit.lease : null };
    if (budget && !budget.ok) {
      this.giveBack(held);
      const amount = budget.unit === 'usd' ? `$${budget.remaining.toFixed(4)}` : `${Math.round(budget.remaining)} tokens`;
      return {
        ok: false,
        outcome: 'budget',
        retryAfterMs: budget.retryAfterMs,
        waitedMs: 0,
        message: `budget ${budget.scope} per ${budget.per} exhausted (${amount} left)`,
      };
    }
    if (limit && !limit.ok) {
      this.giveBack(held);
      if (limit.limit === 'aborted') return { ok: false, outcome: 'aborted' };
      return {
        ok: false,
        outcome: 'rate_limited',
        retryAfterMs: limit.retryAfterMs,
        waitedMs: limit.waitedMs,
        message: `provider ${tier.provider.name} at its ${limit.limit} limit`,
      };
    }
    this.held.set(tier, held);
    return { ok: true };
  }

  /** A retry on the same tier is one more request at its provider: it needs room in the rpm bucket (waiting as `reserve` does). */
  async reserveRetry(tier: Tier, client: ClientLifetime, maxWaitMs = Infinity): Promise<boolean> {
    const limits = tierRules(tier, this.config)?.limits;
    if (!limits?.rpm) return true;
    const waitMs = Math.max(0, Math.min(limits.queue_ms, maxWaitMs));
    const grant = await this.state.limits.acquire({ provider: tier.provider.name, limits, tokens: 0, slot: false, slotMs: 0, maxWaitMs: waitMs }, client);
    return grant.ok;
  }

  /** The tier did not answer (failed, or was passed over): what it held goes back. */
  leave(tier: Tier): void {
    const held = this.held.get(tier);
    if (!held) return;
    this.held.delete(tier);
    this.giveBack(held);
  }

  /**
   * The request ended. The tier that answered (if any) settles its hold to what it used (the
   * upstream's usage, else estimated); everything else held goes back.
   */
  end(answered: Answered | null): void {
    if (answered) this.settle(answered);
    for (const held of this.held.values()) this.giveBack(held);
    this.held.clear();
  }

  /** A tier answered (a stream's mid-stream recovery answers on a second one): its hold settles to what it used. */
  settle(answered: Answered): void {
    const held = this.held.get(answered.tier);
    if (!held) return;
    this.held.delete(answered.tier);
    const used = usedTokens(answered.usage, this.promptTokens(), answered.usage ? '' : answered.completionText());
    if (held.budget) void this.state.budgets.settle(held.budget, actualSpend(held.tier, used));
    if (held.lease) void this.state.limits.settle(held.lease, used.prompt_tokens + used.completion_tokens);
  }

  private giveBack(held: Held): void {
    if (held.budget) void this.state.budgets.release(held.budget);
    if (held.lease) void this.state.limits.settle(held.lease, 0);
  }

  private promptTokens(): number {
    return (this.prompt ??= promptEstimate(this.request));
  }
}

/**
 * Longest a request can stay at one tier (every attempt, with backoff), plus a margin: the slot
 * of a holder that died lapses after this. A live holder renews its slot while it runs (a
 * committed stream outlives total_ms: state/redis-limiter.ts), so a long stream keeps it.
 */
function slotLifetimeMs(tier: Tier): number {
  return tier.retry.attempts * (Math.max(tier.timeouts.total_ms, tier.timeouts.stream_max_ms) + tier.retry.max_ms) + 5_000;
}
