import type { Config, Limits } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { BudgetStatus } from '../usage/budgets/ledger.js';
import { LocalIdempotency } from './local-idempotency.js';
import { configuredLimits, LocalLimiter } from './local-limiter.js';
import { RedisIdempotency } from './redis-idempotency.js';
import { RedisLedger } from '../usage/budgets/redis-ledger.js';
import { RedisLimiter } from './redis-limiter.js';
import { RedisLink } from '../redis/redis-link.js';
import { RedisWeights } from './redis-weights.js';
import type { SharedWeights } from './shared-weights.js';
import type { LimitsView, StateBackend } from './types.js';

/**
 * Several instances as one (`state.redis`): limit buckets, budgets, idempotency records and
 * weight overrides live in Redis. Health stays per instance. Each part answers from local
 * state while Redis is away and rejoins when it is back.
 */
export class RedisState implements StateBackend {
  readonly kind = 'redis' as const;
  readonly limits: RedisLimiter;
  readonly budgets: RedisLedger;
  readonly idempotency: RedisIdempotency;
  private readonly link: RedisLink;
  private readonly weights: RedisWeights;
  private readonly localIdempotency = new LocalIdempotency();

  constructor(
    config: Config & { state: { redis: string } },
    bus: TelemetryBus,
    weights: SharedWeights,
    setBudgetGauge: (status: readonly BudgetStatus[]) => void,
  ) {
    const prefix = config.state.prefix;
    this.link = new RedisLink(config.state.redis, bus);
    this.limits = new RedisLimiter(this.link, prefix, new LocalLimiter());
    this.budgets = new RedisLedger(this.link, prefix, config.budgets, setBudgetGauge);
    this.idempotency = new RedisIdempotency(this.link, prefix, this.localIdempotency);
    this.weights = new RedisWeights(this.link, prefix);
    this.weights.attach(weights);
    this.link.onRejoin(async () => {
      this.limits.local.resetBuckets();
      await this.budgets.rejoin();
    });
  }

  get up(): boolean {
    return this.link.up;
  }

  configure(config: Config): void {
    this.budgets.configure(config.budgets);
  }

  limitsView(provider: string, limits: Limits): LimitsView {
    return { ...configuredLimits(limits), in_flight: this.limits.inFlight(provider), rate_limited: this.limits.local.view(provider).refused };
  }

  async close(): Promise<void> {
    await this.weights.close();
    this.idempotency.close();
    this.localIdempotency.close();
    this.budgets.close();
    await this.link.close();
  }
}
