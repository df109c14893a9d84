import type { Counter, Gauge, Registry } from 'prom-client';
import * as prom from '../telemetry/prom.js';
import type { Config, Price } from '../config/schema.js';
import type { RequestFinished } from '../telemetry/events.js';
import type { BudgetStatus } from './budgets/ledger.js';
import { costUsd } from './cost.js';
import type { EstimatedItem } from './request-row.js';

/**
 * The usage metrics (docs/operations.md): `llm_cost_usd_total{route,tier}` priced from the
 * upstream's usage as requests end (estimated usage, its tokens in `llm_tokens_total` too, is
 * added when the usage engine has counted it), `llm_tokens_total{kind="cached"}` beside the
 * prompt/completion series, and `llm_budget_remaining{scope,unit}` as the ledger last saw it.
 */
export class UsageMetrics {
  private readonly cost: Counter<'route' | 'tier'>;
  private readonly tokens: Counter<string>;
  private readonly budgetRemaining: Gauge<'scope' | 'unit'>;
  private prices = new Map<string, Price>();
  private readonly costChildren = new Map<string, Counter.Internal>();
  private readonly cachedChildren = new Map<string, Counter.Internal>();
  /** Estimated prompt and completion tokens join the series telemetry/metrics.ts keeps for upstream usage. */
  private readonly promptChildren = new Map<string, Counter.Internal>();
  private readonly completionChildren = new Map<string, Counter.Internal>();

  constructor(registry: Registry, config: Config) {
    this.cost = new prom.Counter({
      name: 'llm_cost_usd_total',
      help: "USD spent by answered requests, at the tier's price (from upstream usage, or estimated usage once counted).",
      labelNames: ['route', 'tier'],
      registers: [registry],
    });
    // The prompt/completion series live in telemetry/metrics.ts; the cached kind joins them.
    this.tokens =
      (registry.getSingleMetric('llm_tokens_total') as Counter<string> | undefined) ??
      new prom.Counter({
        name: 'llm_tokens_total',
        help: 'Tokens as reported by upstream usage, or counted by llm-route where the upstream reported none.',
        labelNames: ['route', 'tier', 'kind'],
        registers: [registry],
      });
    this.budgetRemaining = new prom.Gauge({
      name: 'llm_budget_remaining',
      help: 'What a budget has left in its current window (the smallest when one scope has several in one unit).',
      labelNames: ['scope', 'unit'],
      registers: [registry],
    });
    this.configure(config);
  }

  configure(config: Config): void {
    const prices = new Map<string, Price>();
    for (const route of config.routes.values()) {
      for (const tier of route.tiers) if (tier.price) prices.set(key(route.name, tier.name), tier.price);
    }
    this.prices = prices;
  }

  onRequest(event: RequestFinished): void {
    const usage = event.usage;
    if (!usage || event.tier === null) return;
    const k = key(event.route, event.tier);
    const cached = usage.cached_tokens ?? 0;
    if (cached > 0) this.tokenChild(this.cachedChildren, k, event.route, event.tier, 'cached').inc(cached);
    const price = this.prices.get(k);
    if (price) this.addCostAt(k, event.route, event.tier, costUsd(price, { prompt: usage.prompt_tokens, completion: usage.completion_tokens, cached }));
  }

  /** Tokens the usage engine counted (the upstream reported none, or a stream ended before its finish) and their cost. */
  addEstimated(item: EstimatedItem): void {
    const k = key(item.route, item.tier);
    if (item.prompt > 0) this.tokenChild(this.promptChildren, k, item.route, item.tier, 'prompt').inc(item.prompt);
    if (item.completion > 0) this.tokenChild(this.completionChildren, k, item.route, item.tier, 'completion').inc(item.completion);
    if (item.cached > 0) this.tokenChild(this.cachedChildren, k, item.route, item.tier, 'cached').inc(item.cached);
    this.addCostAt(k, item.route, item.tier, item.costUsd);
  }

  setBudgets(status: readonly BudgetStatus[]): void {
    const lowest = new Map<string, { scope: string; unit: string; remaining: number }>();
    for (const s of status) {
      const k = key(s.scope, s.unit);
      const seen = lowest.get(k);
      if (!seen || s.remaining < seen.remaining) lowest.set(k, { scope: s.scope, unit: s.unit, remaining: s.remaining });
    }
    this.budgetRemaining.reset();
    for (const s of lowest.values()) this.budgetRemaining.labels(s.scope, s.unit).set(s.remaining);
  }

  private addCostAt(k: string, route: string, tier: string, usd: number): void {
    if (usd <= 0) return;
    let child = this.costChildren.get(k);
    if (!child) this.costChildren.set(k, (child = this.cost.labels(route, tier)));
    child.inc(usd);
  }

  private tokenChild(
    children: Map<string, Counter.Internal>,
    k: string,
    route: string,
    tier: string,
    kind: 'prompt' | 'completion' | 'cached',
  ): Counter.Internal {
    let child = children.get(k);
    if (!child) children.set(k, (child = this.tokens.labels(route, tier, kind)));
    return child;
  }
}

function key(a: string, b: string): string {
  return `${a}\u0000${b}`;
}
