import type { Config } from '../../config/schema.js';
import type { RequestFinished } from '../../telemetry/events.js';
import { costUsd } from '../../usage/cost.js';
import type { DayTotals } from '../../usage/store.js';

const DAY_MS = 86_400_000;

/** Today's (UTC) cost and tokens as the header shows them. */
export interface UsageTodayView {
  costUsd: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Σ (before − after) of the token savers that ran today. */
  saverTokensSaved: number;
}

interface TierTokens {
  route: string;
  tier: string;
  prompt: number;
  completion: number;
  cached: number;
}

/**
 * Today's totals: what the usage log held when the dashboard started (the rows of earlier
 * processes) plus this session's finished requests, priced with the tier file's prices. The
 * tokens are summed per tier and priced when a frame is drawn (cost is linear in tokens).
 */
export class UsageToday {
  private day = -1;
  private readonly tiers = new Map<string, TierTokens>();
  private saverSaved = 0;
  private baseline: { day: number; totals: DayTotals } | null = null;

  add(event: RequestFinished, at: number): void {
    this.rollOver(at);
    const savers = event.savers;
    if (savers) for (const s of savers) this.saverSaved += Math.max(0, s.before - s.after);
    const usage = event.usage;
    if (!usage || event.tier === null) return;
    const key = `${event.route}\u0000${event.tier}`;
    let sums = this.tiers.get(key);
    if (!sums) this.tiers.set(key, (sums = { route: event.route, tier: event.tier, prompt: 0, completion: 0, cached: 0 }));
    sums.prompt += usage.prompt_tokens;
    sums.completion += usage.completion_tokens;
    sums.cached += usage.cached_tokens ?? 0;
  }

  /** The log's totals for the day holding `at`, taken before this session wrote anything. */
  setBaseline(totals: DayTotals, at: number): void {
    this.baseline = { day: Math.floor(at / DAY_MS), totals };
  }

  view(config: Config, now: number): UsageTodayView {
    this.rollOver(now);
    const base = this.baseline?.day === this.day ? this.baseline.totals : null;
    const view: UsageTodayView = {
      costUsd: base?.costUsd ?? 0,
      promptTokens: base?.promptTokens ?? 0,
      completionTokens: base?.completionTokens ?? 0,
      cachedTokens: base?.cachedTokens ?? 0,
      saverTokensSaved: (base?.saverTokensSaved ?? 0) + this.saverSaved,
    };
    for (const sums of this.tiers.values()) {
      view.promptTokens += sums.prompt;
      view.completionTokens += sums.completion;
      view.cachedTokens += sums.cached;
      const price = config.routes.get(sums.route)?.tiers.find((t) => t.name === sums.tier)?.price;
      if (price) view.costUsd += costUsd(price, { prompt: sums.prompt, completion: sums.completion, cached: sums.cached });
    }
    return view;
  }

  private rollOver(at: number): void {
    const day = Math.floor(at / DAY_MS);
    if (day === this.day) return;
    if (this.day !== -1) {
      this.tiers.clear();
      this.saverSaved = 0;
    }
    this.day = day;
  }
}
