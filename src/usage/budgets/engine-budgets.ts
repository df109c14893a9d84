import type { Budget } from '../../config/schema.js';
import type { BudgetAmount, BudgetStatus, Reservation } from './ledger.js';
import { LedgerTables } from './ledger-tables.js';
import { UsageStore } from '../store.js';

/** Ids of reservations held in memory while the file was unusable. */
const MEMORY_PREFIX = 'm:';

interface EngineBudgetsDeps {
  /** The budgets of the current config. */
  budgets: () => readonly Budget[];
  now: () => number;
  /** How long a reservation holds its amount when it is never settled (its process died). */
  holdMs: number;
  /** Runs a database call; a failure degrades the usage database instead of escaping (UsageEngine). */
  guard: (fn: () => unknown) => void;
  /** Every budget's status, after each change (EngineReports.budgets). */
  report: (status: BudgetStatus[]) => void;
}

/**
 * The usage engine's budget ledger: on the usage database while it can be used, else on
 * counters in memory, whose spend moves to the file when it is back.
 */
export class EngineBudgets {
  private file: LedgerTables | null = null;
  private memory: { store: UsageStore; ledger: LedgerTables } | null = null;

  constructor(private readonly deps: EngineBudgetsDeps) {}

  /** The usage database opened (null: it closed or failed). */
  useFile(ledger: LedgerTables | null): void {
    this.file = ledger;
  }

  reserve(scopes: readonly string[], amount: BudgetAmount): Reservation {
    const { budgets, now, holdMs, guard } = this.deps;
    let result: Reservation | null = null;
    const file = this.file;
    if (file) guard(() => (result = file.reserve(budgets(), scopes, amount, now(), holdMs)));
    if (result === null) {
      const memory = this.memoryLedger();
      result = memory.reserve(budgets(), scopes, amount, now(), holdMs);
      if (result.ok) result = { ok: true, id: MEMORY_PREFIX + result.id };
    }
    this.report();
    return result;
  }

  /** A reservation settled with what was spent, or released (null). */
  end(id: string, actual: BudgetAmount | null): void {
    const { guard } = this.deps;
    if (id.startsWith(MEMORY_PREFIX)) {
      const memoryId = id.slice(MEMORY_PREFIX.length);
      const memory = this.memoryLedger();
      if (this.file && actual) {
        // The file is back: the spend goes straight to it.
        const holds = memory.release(memoryId);
        guard(() => this.file?.charge(holds, actual));
      } else if (actual) memory.settle(memoryId, actual);
      else memory.release(memoryId);
    } else if (this.file) {
      guard(() => (actual ? this.file?.settle(id, actual) : this.file?.release(id)));
    }
    this.report();
  }

  /** Reports every budget's status, when there are budgets. */
  report(): void {
    if (this.deps.budgets().length > 0) this.deps.report(this.status());
  }

  status(): BudgetStatus[] {
    const budgets = this.deps.budgets();
    if (budgets.length === 0) return [];
    const now = this.deps.now();
    let status: BudgetStatus[] | null = null;
    const file = this.file;
    if (file) this.deps.guard(() => (status = file.status(budgets, now)));
    return status ?? this.memoryLedger().status(budgets, now);
  }

  /** Budget spend counted in memory while the file was unusable moves into the file. */
  moveMemorySpend(): void {
    if (!this.memory || !this.file) return;
    const spent = this.memory.ledger.drainSpent();
    if (spent.length > 0) this.deps.guard(() => this.file?.charge(spent, (hold) => hold.amount));
  }

  close(): void {
    this.memory?.store.close();
    this.memory = null;
  }

  private memoryLedger(): LedgerTables {
    if (!this.memory) {
      const store = new UsageStore(':memory:');
      this.memory = { store, ledger: new LedgerTables(store.db) };
    }
    return this.memory.ledger;
  }
}
