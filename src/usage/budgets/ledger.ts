/**
 * The budgets ledger: what a request's holds at its tiers call. Reserve the worst case
 * before a tier is tried, settle to the actual usage (or release) when the request ends. Each
 * call is its own transaction on the shared counters, so concurrent requests, in this process
 * or in others sharing the database, never spend past a limit. An implementation on Redis can
 * stand behind the same interface.
 */
export interface BudgetLedger {
  /**
   * Holds `amount` against every budget of these scopes (`route:NAME`, `provider:NAME`), all or
   * nothing. Scopes without a budget are free: `{ ok: true }` without touching the database.
   */
  reserve(scopes: readonly string[], amount: BudgetAmount): Promise<Reservation>;
  /** Replaces a reservation's hold by what the request really used. Unknown or empty ids: no-op. */
  settle(id: string, actual: BudgetAmount): Promise<void>;
  /** Drops a reservation's hold: nothing was spent (no tier answered). */
  release(id: string): Promise<void>;
  /** Every budget of a scope in its current window. */
  remaining(scope: string): Promise<BudgetStatus[]>;
}

/** Both units at once: a budget counts the one it is written in. */
export interface BudgetAmount {
  tokens: number;
  usd: number;
}

export type Reservation =
  | { ok: true; id: string }
  /** `scope` is the first budget found exhausted; retry after its window ends (UTC midnight / the 1st). */
  | { ok: false; scope: string; unit: 'usd' | 'tokens'; per: 'day' | 'month'; remaining: number; retryAfterMs: number };

export interface BudgetStatus {
  scope: string;
  per: 'day' | 'month';
  unit: 'usd' | 'tokens';
  limit: number;
  spent: number;
  reserved: number;
  /** limit − spent − reserved, never below 0. */
  remaining: number;
  /** Epoch ms the window ends. */
  resetsAt: number;
}
