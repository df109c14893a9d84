import type { Budget } from '../config/schema.js';
import type { BudgetAmount, BudgetStatus } from './budgets/ledger.js';
import type { PriceBook } from './price-book.js';
import type { LoggedRequest } from './request-row.js';
import type { IncidentOpen } from './store.js';

/** What the usage engine is told: the UsageLog is the only sender. */
export type ToEngine =
  | { t: 'configure'; path: string; retentionDays: number; book: PriceBook; budgets: Budget[] }
  | { t: 'rows'; requests: readonly LoggedRequest[] }
  | { t: 'incident_open'; incident: IncidentOpen }
  | { t: 'incident_close'; key: string; closedAt: number; closedBy: string }
  | { t: 'call'; id: number; call: EngineCall };

export type EngineCall =
  | { op: 'reserve'; scopes: string[]; amount: BudgetAmount }
  | { op: 'settle'; reservation: string; actual: BudgetAmount }
  | { op: 'release'; reservation: string }
  | { op: 'remaining'; scope: string }
  | { op: 'day_totals'; from: number }
  /** Answers once everything sent before it is written: a flush barrier. */
  | { op: 'sync' }
  /** Writes what is pending and closes the database. */
  | { op: 'close' };

/** What the usage engine reports back. */
export type FromEngine =
  | { t: 'reply'; id: number; ok: true; value: unknown }
  | { t: 'reply'; id: number; ok: false; error: string }
  | { t: 'degraded'; path: string; error: string }
  | { t: 'recovered'; path: string; dropped: number }
  /** Tokens and costs only the usage engine knows: requests whose tokens it estimated. */
  | { t: 'estimated'; items: EstimatedItem[] }
  | { t: 'budgets'; status: BudgetStatus[] };

/** One request's estimated tokens (prompt, completion, cached) and their cost, for the metrics. */
export interface EstimatedItem {
  route: string;
  tier: string;
  costUsd: number;
  prompt: number;
  completion: number;
  cached: number;
}
