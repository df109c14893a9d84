import type { Budget } from '../../config/schema.js';
import type { EngineCall } from '../messages.js';
import type { BudgetAmount, BudgetLedger, BudgetStatus, Reservation } from './ledger.js';

/** A reservation that holds nothing: no budget covers its scopes. Settling or releasing it is free. */
const NOTHING_HELD = '';

/**
 * The ledger as the request path sees it: calls go to the usage engine, which runs each as
 * one IMMEDIATE transaction on the usage database. Scopes without a budget cost nothing (no
 * message at all).
 */
export class LedgerClient implements BudgetLedger {
  private scopes = new Set<string>();

  constructor(budgets: readonly Budget[], private readonly call: (call: EngineCall) => Promise<unknown>) {
    this.configure(budgets);
  }

  configure(budgets: readonly Budget[]): void {
    this.scopes = new Set(budgets.map((b) => b.scope));
  }

  /**
   * Never rejects: with no usage engine to ask (the log is closing) or a call that failed, the
   * request is admitted unbudgeted rather than failed.
   */
  async reserve(scopes: readonly string[], amount: BudgetAmount): Promise<Reservation> {
    if (!scopes.some((scope) => this.scopes.has(scope))) return { ok: true, id: NOTHING_HELD };
    try {
      return (await this.call({ op: 'reserve', scopes: [...scopes], amount })) as Reservation;
    } catch {
      return { ok: true, id: NOTHING_HELD };
    }
  }

  /** Never rejects (see reserve). */
  async settle(id: string, actual: BudgetAmount): Promise<void> {
    if (id !== NOTHING_HELD) await this.call({ op: 'settle', reservation: id, actual }).catch(() => undefined);
  }

  async release(id: string): Promise<void> {
    if (id !== NOTHING_HELD) await this.call({ op: 'release', reservation: id }).catch(() => undefined);
  }

  async remaining(scope: string): Promise<BudgetStatus[]> {
    if (!this.scopes.has(scope)) return [];
    return (await this.call({ op: 'remaining', scope })) as BudgetStatus[];
  }
}
