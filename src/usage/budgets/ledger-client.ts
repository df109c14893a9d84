import type { Budget } from '../../config/schema.js';
import type { BudgetAmount, BudgetLedger, BudgetStatus, Reservation } from './ledger.js';

/** A reservation that holds nothing: no budget covers its scopes. Settling or releasing it is free. */
const NOTHING_HELD = '';

/** Runs a call on the usage engine's ledger; rejects when there is no engine to ask (the log is closed). */
export type EngineLedger = <T>(call: (ledger: BudgetLedger) => Promise<T>) => Promise<T>;

/**
 * The ledger as the request path sees it: calls go to the usage engine, which runs each as
 * one IMMEDIATE transaction on the usage database. Scopes without a budget cost nothing (no
 * call at all).
 */
export class LedgerClient implements BudgetLedger {
  private scopes = new Set<string>();

  constructor(
    budgets: readonly Budget[],
    private readonly engine: EngineLedger,
  ) {
    this.configure(budgets);
  }

  configure(budgets: readonly Budget[]): void {
    this.scopes = new Set(budgets.map((b) => b.scope));
  }

  /**
   * Never rejects: with no usage engine to ask (the log is closing) or a call that failed, the
   * request is let through unbudgeted rather than failed.
   */
  async reserve(scopes: readonly string[], amount: BudgetAmount): Promise<Reservation> {
    if (!scopes.some((scope) => this.scopes.has(scope))) return { ok: true, id: NOTHING_HELD };
    try {
      return await this.engine((ledger) => ledger.reserve(scopes, amount));
    } catch {
      return { ok: true, id: NOTHING_HELD };
    }
  }

  /** Never rejects (see reserve). */
  async settle(id: string, actual: BudgetAmount): Promise<void> {
    if (id !== NOTHING_HELD) await this.engine((ledger) => ledger.settle(id, actual)).catch(() => undefined);
  }

  async release(id: string): Promise<void> {
    if (id !== NOTHING_HELD) await this.engine((ledger) => ledger.release(id)).catch(() => undefined);
  }

  async remaining(scope: string): Promise<BudgetStatus[]> {
    if (!this.scopes.has(scope)) return [];
    return this.engine((ledger) => ledger.remaining(scope));
  }
}
