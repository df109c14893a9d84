import { nodeCrypto } from '../../util/node-crypto.js';
import type { Budget } from '../../config/schema.js';
import type { BudgetAmount, Reservation } from './ledger.js';

/** USD are floats: amounts closer than this are equal (as in ledger-tables.ts). */
const EPSILON = 1e-9;

/** One budget's window as the ledger counts it. */
export interface WindowRef {
  key: string;
  budget: Budget;
  end: number;
}

interface LocalWindow {
  /** What the shared ledger had used (spent + reserved) when this instance last saw it. */
  base: number;
  spent: number;
  reserved: number;
}

interface LocalHold {
  window: WindowRef;
  amount: number;
}

/** Spend settled here that the shared ledger has not been told of yet. */
export interface PendingCharge {
  key: string;
  amount: number;
  end: number;
}

/**
 * Budgets on this instance's own counters, for while Redis is away: each window starts from
 * what Redis last said it had used, so one instance alone cannot overspend, and N apart can
 * overspend by at most what was left when they parted, N − 1 times over. What is settled
 * here is kept as pending charges, moved to Redis when it is back (added, never reseeded).
 */
export class LocalLedger {
  private readonly windows = new Map<string, LocalWindow>();
  private readonly holds = new Map<string, LocalHold[]>();
  private charges: PendingCharge[] = [];

  reserve(refs: readonly WindowRef[], amount: BudgetAmount, now: number, lastUsed: (key: string) => number): Reservation {
    for (const ref of refs) {
      const window = this.windowOf(ref.key, lastUsed);
      const available = ref.budget.limit - window.base - window.spent - window.reserved;
      const need = amount[ref.budget.unit];
      if (available <= EPSILON || need > available + EPSILON) {
        const { scope, unit, per } = ref.budget;
        return { ok: false, scope, unit, per, remaining: Math.max(0, available), retryAfterMs: ref.end - now };
      }
    }
    const id = nodeCrypto().randomUUID();
    const holds: LocalHold[] = [];
    for (const ref of refs) {
      const need = amount[ref.budget.unit];
      this.windowOf(ref.key, lastUsed).reserved += need;
      holds.push({ window: ref, amount: need });
    }
    this.holds.set(id, holds);
    return { ok: true, id };
  }

  /** The hold becomes spend (`actual`), or is dropped (null); the spend waits to be charged to the shared ledger. */
  end(id: string, actual: BudgetAmount | null): void {
    const holds = this.holds.get(id);
    if (!holds) return;
    this.holds.delete(id);
    for (const hold of holds) {
      const window = this.windows.get(hold.window.key);
      if (window) window.reserved = Math.max(0, window.reserved - hold.amount);
      if (!actual) continue;
      const spent = actual[hold.window.budget.unit];
      if (window) window.spent += spent;
      if (spent > 0) this.charges.push({ key: hold.window.key, amount: spent, end: hold.window.end });
    }
  }

  /** Used (spent + reserved) of a window here, beyond its base. */
  usedHere(key: string): number {
    const window = this.windows.get(key);
    return window ? window.spent + window.reserved : 0;
  }

  /** The charges not yet moved to the shared ledger (the caller now sees them through). */
  takeCharges(): PendingCharge[] {
    const charges = this.charges;
    this.charges = [];
    return charges;
  }

  /** Rejoined: the shared ledger is the truth again; windows with holds still open stay until they end. */
  forgetWindows(): void {
    const open = new Set<string>();
    for (const holds of this.holds.values()) for (const hold of holds) open.add(hold.window.key);
    for (const key of this.windows.keys()) if (!open.has(key)) this.windows.delete(key);
  }

  private windowOf(key: string, lastUsed: (key: string) => number): LocalWindow {
    let window = this.windows.get(key);
    if (!window) this.windows.set(key, (window = { base: lastUsed(key), spent: 0, reserved: 0 }));
    return window;
  }
}
