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

/** What a request holds at one tier: a budget reservation, a limit lease (a concurrency slot, tpm tokens), and what the tier was charged. */
interface TierHold {
  tier: Tier;
  budget: string | null;
  lease: LimitLease | null;
  /** What the tier used, as charged so far (null: nothing): its hold settles to it. */
  used: Usage | null;
}

/**
 * One request's holds at the tiers it tries, one per tier: before the tier's first attempt,
 * its worst case is reserved on the tier's budgets and room is taken at its provider (waiting
 * up to queue_ms). Each hold ends once, in `endHold`: settled to what its tier was charged for
 * its own tokens (an answer, or the part of one it delivered; a hedge's loser, what its upstream
 * reported), else given back. A tier's hold ends when the request leaves the tier (the attempt
 * log says when); every hold still open ends with the request (`end`, from the exchange's
 * close), so none outlives it. Made only for routes where some tier has limits or budgets, so
 * a request on any other route pays nothing.
 */
export class RequestHolds {
  private readonly holds = new Map<Tier, TierHold>();
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

  /** Before the tier's first attempt: its hold, or why not. `maxWaitMs` caps the queue wait (a stream's deadline). */
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

    const hold: TierHold = { tier, budget: budget?.ok ? budget.id : null, lease: limit?.ok ? limit.lease : null, used: null };
    if (budget && !budget.ok) {
      this.endHold(hold);
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
      this.endHold(hold);
      if (limit.limit === 'aborted') return { ok: false, outcome: 'aborted' };
      return {
        ok: false,
        outcome: 'rate_limited',
        retryAfterMs: limit.retryAfterMs,
        waitedMs: limit.waitedMs,
        message: `provider ${tier.provider.name} at its ${limit.limit} limit`,
      };
    }
    // Never two holds at one tier: one still open (no path leaves it so, but none may leak) ends first.
    this.leave(tier);
    this.holds.set(tier, hold);
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

  /**
   * Tokens the tier used for this request: its upstream's usage, else `text` (what it wrote)
   * estimated with the prompt. Added to what the tier was charged before (a resume on the
   * tier that broke); the hold settles to the sum when it ends.
   */
  charge(tier: Tier, usage: Usage | undefined, text: string): void {
    const hold = this.holds.get(tier);
    if (!hold) return;
    const used = usedTokens(usage, this.promptTokens(), usage ? '' : text);
    const before = hold.used;
    hold.used = before
      ? {
          prompt_tokens: before.prompt_tokens + used.prompt_tokens,
          completion_tokens: before.completion_tokens + used.completion_tokens,
          cached_tokens: (before.cached_tokens ?? 0) + (used.cached_tokens ?? 0),
        }
      : used;
  }

  /** The request is done with the tier: its hold ends now (settled to what it was charged, else given back). */
  leave(tier: Tier): void {
    const hold = this.holds.get(tier);
    if (!hold) return;
    this.holds.delete(tier);
    this.endHold(hold);
  }

  /** The request ended: every hold still open ends. */
  end(): void {
    for (const hold of this.holds.values()) this.endHold(hold);
    this.holds.clear();
  }

  /** The one place a hold ends: its budgets and its limit lease settled to what its tier used, or all of it given back. */
  private endHold(hold: TierHold): void {
    const used = hold.used;
    if (hold.budget) void (used ? this.state.budgets.settle(hold.budget, actualSpend(hold.tier, used)) : this.state.budgets.release(hold.budget));
    if (hold.lease) void this.state.limits.settle(hold.lease, used ? used.prompt_tokens + used.completion_tokens : 0);
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
