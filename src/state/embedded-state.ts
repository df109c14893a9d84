import type { Config, Limits } from '../config/schema.js';
import type { BudgetLedger } from '../usage/budgets/ledger.js';
import { LocalIdempotency } from './local-idempotency.js';
import { configuredLimits, LocalLimiter } from './local-limiter.js';
import type { LimitsView, StateBackend } from './types.js';

/**
 * Everything in this process, budgets in the usage database (one IMMEDIATE transaction each,
 * so even processes sharing the file never overspend): one instance, no Redis.
 */
export class EmbeddedState implements StateBackend {
  readonly kind = 'embedded' as const;
  readonly up = true;
  readonly limits = new LocalLimiter();
  readonly idempotency = new LocalIdempotency();

  constructor(readonly budgets: BudgetLedger) {}

  configure(_config: Config): void {
    // Budgets are configured through the usage log that owns their ledger; limits are read per request.
  }

  limitsView(provider: string, limits: Limits): LimitsView {
    const seen = this.limits.view(provider);
    return { ...configuredLimits(limits), in_flight: seen.inFlight, rate_limited: seen.refused };
  }

  async close(): Promise<void> {
    this.idempotency.close();
  }
}
