import { nodeCrypto } from '../../util/node-crypto.js';
import type { Database, Statement } from 'better-sqlite3';
import type { Budget } from '../../config/schema.js';
import type { BudgetAmount, BudgetStatus, Reservation } from './ledger.js';
import { budgetWindow } from './windows.js';

/** USD are floats: amounts closer than this are equal (costs compare to 1e-9). */
const EPSILON = 1e-9;

export interface HoldRow {
  scope: string;
  per: string;
  unit: 'usd' | 'tokens';
  window_start: number;
  window_end: number;
  amount: number;
}

/**
 * The ledger's SQL on one database: `budget_windows` holds what each budget's window has spent
 * and holds in reserve, `budget_holds` each reservation's share. Every operation is one
 * IMMEDIATE transaction (the write lock is taken at BEGIN), so two processes cannot both read
 * the same remaining amount and both spend it.
 */
export class LedgerTables {
  private readonly window: Statement<[string, string, string, number], { spent: number; reserved: number }>;
  private readonly addReserve: Statement<[string, string, string, number, number, number]>;
  private readonly addHold: Statement<[string, string, string, string, number, number, number]>;
  private readonly holdsOf: Statement<[string], HoldRow>;
  private readonly expiredHolds: Statement<[number], HoldRow>;
  private readonly dropHolds: Statement<[string]>;
  private readonly dropExpired: Statement<[number]>;
  private readonly unreserve: Statement<[number, number, string, string, string, number]>;
  private readonly addSpend: Statement<[string, string, string, number, number, number]>;

  constructor(private readonly db: Database) {
    this.window = db.prepare('SELECT spent, reserved FROM budget_windows WHERE scope = ? AND per = ? AND unit = ? AND window_start = ?');
    this.addReserve = db.prepare(
      `INSERT INTO budget_windows (scope, per, unit, window_start, window_end, reserved) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, per, unit, window_start) DO UPDATE SET reserved = reserved + excluded.reserved`,
    );
    this.addHold = db.prepare('INSERT INTO budget_holds (reservation, scope, per, unit, window_start, amount, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.addSpend = db.prepare(
      `INSERT INTO budget_windows (scope, per, unit, window_start, window_end, spent) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, per, unit, window_start) DO UPDATE SET spent = spent + excluded.spent`,
    );
    const holds = `SELECT h.scope, h.per, h.unit, h.window_start, w.window_end, h.amount FROM budget_holds h
       JOIN budget_windows w ON w.scope = h.scope AND w.per = h.per AND w.unit = h.unit AND w.window_start = h.window_start`;
    this.holdsOf = db.prepare(`${holds} WHERE h.reservation = ?`);
    this.expiredHolds = db.prepare(`${holds} WHERE h.expires_at <= ?`);
    this.dropHolds = db.prepare('DELETE FROM budget_holds WHERE reservation = ?');
    this.dropExpired = db.prepare('DELETE FROM budget_holds WHERE expires_at <= ?');
    this.unreserve = db.prepare(
      'UPDATE budget_windows SET reserved = max(0, reserved - ?), spent = spent + ? WHERE scope = ? AND per = ? AND unit = ? AND window_start = ?',
    );
  }

  /** All or nothing: a hold on every budget of `scopes`, or the first budget that cannot take `amount`. */
  reserve(budgets: readonly Budget[], scopes: readonly string[], amount: BudgetAmount, now: number, holdMs: number): Reservation {
    const matching = budgets.filter((b) => scopes.includes(b.scope));
    return this.db
      .transaction((): Reservation => {
        this.sweep(now);
        for (const budget of matching) {
          const window = budgetWindow(budget.per, now);
          const row = this.window.get(budget.scope, budget.per, budget.unit, window.start);
          const available = budget.limit - (row?.spent ?? 0) - (row?.reserved ?? 0);
          const need = amount[budget.unit];
          if (available <= EPSILON || need > available + EPSILON) {
            return { ok: false, scope: budget.scope, unit: budget.unit, per: budget.per, remaining: Math.max(0, available), retryAfterMs: window.end - now };
          }
        }
        const id = nodeCrypto().randomUUID();
        for (const budget of matching) {
          const window = budgetWindow(budget.per, now);
          const need = amount[budget.unit];
          this.addReserve.run(budget.scope, budget.per, budget.unit, window.start, window.end, need);
          this.addHold.run(id, budget.scope, budget.per, budget.unit, window.start, need, now + holdMs);
        }
        return { ok: true, id };
      })
      .immediate();
  }

  /** The hold becomes the actual spend, in the window it was reserved in. Returns the holds it replaced. */
  settle(id: string, actual: BudgetAmount): HoldRow[] {
    return this.endHolds(id, actual);
  }

  /** The hold is given back; nothing is spent. Returns the holds it dropped. */
  release(id: string): HoldRow[] {
    return this.endHolds(id, null);
  }

  /** Adds spend to the windows of these holds (spend first counted elsewhere, e.g. in memory while this file was unusable). */
  charge(holds: readonly HoldRow[], actual: BudgetAmount | ((hold: HoldRow) => number)): void {
    this.db
      .transaction(() => {
        for (const hold of holds) {
          const amount = typeof actual === 'function' ? actual(hold) : actual[hold.unit];
          this.addSpend.run(hold.scope, hold.per, hold.unit, hold.window_start, hold.window_end, amount);
        }
      })
      .immediate();
  }

  /** Every window's spend, zeroed here: what moves to the file once it is usable again. */
  drainSpent(): HoldRow[] {
    return this.db
      .transaction(() => {
        const rows = this.db
          .prepare('SELECT scope, per, unit, window_start, window_end, spent AS amount FROM budget_windows WHERE spent > 0')
          .all() as HoldRow[];
        this.db.prepare('UPDATE budget_windows SET spent = 0').run();
        return rows;
      })
      .immediate();
  }

  private endHolds(id: string, actual: BudgetAmount | null): HoldRow[] {
    return this.db
      .transaction(() => {
        const holds = this.holdsOf.all(id);
        for (const hold of holds) this.unreserve.run(hold.amount, actual ? actual[hold.unit] : 0, hold.scope, hold.per, hold.unit, hold.window_start);
        this.dropHolds.run(id);
        return holds;
      })
      .immediate();
  }

  status(budgets: readonly Budget[], now: number): BudgetStatus[] {
    return budgets.map((budget) => {
      const window = budgetWindow(budget.per, now);
      const row = this.window.get(budget.scope, budget.per, budget.unit, window.start);
      const spent = row?.spent ?? 0;
      const reserved = row?.reserved ?? 0;
      return {
        scope: budget.scope,
        per: budget.per,
        unit: budget.unit,
        limit: budget.limit,
        spent,
        reserved,
        remaining: Math.max(0, budget.limit - spent - reserved),
        resetsAt: window.end,
      };
    });
  }

  /** Holds of requests that never settled (their process died): given back. */
  private sweep(now: number): void {
    for (const hold of this.expiredHolds.all(now)) this.unreserve.run(hold.amount, 0, hold.scope, hold.per, hold.unit, hold.window_start);
    this.dropExpired.run(now);
  }
}
