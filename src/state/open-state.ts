import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { BudgetLedger, BudgetStatus } from '../usage/budgets/ledger.js';
import { EmbeddedState } from './embedded-state.js';
import { RedisState } from './redis-state.js';
import type { SharedWeights } from './shared-weights.js';
import { attachStateMetrics } from './state-metrics.js';
import type { StateBackend } from './types.js';

export interface StateDeps {
  config: Config;
  telemetry: TelemetryBus;
  registry: Registry;
  weights: SharedWeights;
  /** The usage database's ledger: the embedded budgets. */
  embeddedBudgets: BudgetLedger;
  /** Hands llm_budget_remaining to a ledger other than the usage database's (Redis). */
  takeBudgetGauge: () => (status: readonly BudgetStatus[]) => void;
}

/** The state backend the tier file asks for: Redis with `state.redis`, else embedded. */
export function openState(deps: StateDeps): StateBackend {
  const { config } = deps;
  const redis = config.state.redis;
  const state: StateBackend = redis
    ? new RedisState({ ...config, state: { ...config.state, redis } }, deps.telemetry, deps.weights, deps.takeBudgetGauge())
    : new EmbeddedState(deps.embeddedBudgets);
  attachStateMetrics(deps.registry, deps.telemetry, () => state.up);
  return state;
}
