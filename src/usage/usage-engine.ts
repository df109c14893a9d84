import type { Budget } from '../config/schema.js';
import { tokenCounter, type TokenCounter } from '../tokens/count.js';
import type { BudgetAmount, BudgetLedger, BudgetStatus, Reservation } from './budgets/ledger.js';
import { EngineBudgets } from './budgets/engine-budgets.js';
import { LedgerTables } from './budgets/ledger-tables.js';
import type { PriceBook } from './price-book.js';
import { type EstimatedItem, estimatedItems, type LoggedRequest, requestRow, type RequestRow } from './request-row.js';
import type { DayTotals, IncidentOpen } from './store.js';
import { type KeeperOptions, StoreKeeper } from './store-keeper.js';

export interface EngineOptions extends KeeperOptions {
  /** How long a reservation holds its amount when it is never settled (its process died). */
  holdMs?: number;
  now?: () => number;
}

/**
 * Rows per transaction (~0.5 ms of this thread): between two, the event loop runs, so a request
 * waits behind at most one.
 */
const CHUNK = 100;
/**
 * Counting a row's estimate (an upstream that reported no usage) costs ~0.3 µs a character of
 * its prompt: ~30 ms for 100 KB of code. The event loop runs once building rows has taken this
 * long, so a relayed stream waits behind one such count, never a batch of them.
 */
const SLICE_MS = 10;

/** What the engine works with: from the config (UsageLog.configure). */
export interface EngineSettings {
  path: string;
  retentionDays: number;
  book: PriceBook;
  budgets: Budget[];
  /** Written into each row: the process serving (UsageLog.run). */
  run?: string;
}

/** What the engine tells the usage log, as it happens. */
export interface EngineReports {
  /** The database became unusable (reported once until it recovers). */
  degraded(path: string, error: string): void;
  /** It is usable again; `dropped` rows were lost meanwhile. */
  recovered(path: string, dropped: number): void;
  /** Tokens and costs only the engine knows: requests whose tokens it counted itself. */
  estimated(items: EstimatedItem[]): void;
  /** Every budget's status, after each change. */
  budgets(status: BudgetStatus[]): void;
}

/**
 * The usage log's work: the database, the rows, the ledger. Everything asked of it is done in
 * the order asked, one after another, on its promise queue: a budget reserved after rows sees
 * them. A database that cannot be opened or written (locked, corrupt, full, unwritable) is
 * reported once, rows meanwhile are dropped and counted, and opening is retried with backoff;
 * budgets are then enforced on counters in memory, which move to the file when it is back. On
 * the main thread, loaded at first need by src/usage/engine-link.ts. Keeping the database open
 * (opening, failing, retrying, pruning) is store-keeper.ts's.
 */
export class UsageEngine implements BudgetLedger {
  private settings: EngineSettings | null = null;
  private readonly keeper: StoreKeeper;
  private readonly budgets: EngineBudgets;
  private queue: Promise<unknown> = Promise.resolve();
  private counter: TokenCounter | undefined;
  private readonly now: () => number;

  constructor(
    private readonly reports: EngineReports,
    options: EngineOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.keeper = new StoreKeeper(
      {
        post: (work) => this.post(work),
        degraded: (path, error) => this.reports.degraded(path, error),
        recovered: (path, dropped) => this.reports.recovered(path, dropped),
        attach: (store) => this.budgets.useFile(store ? new LedgerTables(store.db) : null),
        opened: () => this.budgets.moveMemorySpend(),
      },
      options,
      this.now,
    );
    this.budgets = new EngineBudgets({
      budgets: () => this.settings?.budgets ?? [],
      now: this.now,
      holdMs: options.holdMs ?? 3_600_000,
      guard: (fn) => this.keeper.guard(fn),
      report: (status) => this.reports.budgets(status),
    });
  }

  // ─── what the usage log asks ──────────────────────────────────────────────

  /** New settings: another path reopens the database. */
  configure(settings: EngineSettings): void {
    this.post(() => this.applySettings(settings));
  }

  writeRows(requests: readonly LoggedRequest[]): void {
    this.post(() => this.insertRows(requests));
  }

  openIncident(incident: IncidentOpen): void {
    this.post(() => this.keeper.withStore((store) => store.openIncident(incident)));
  }

  closeIncident(key: string, closedAt: number, closedBy: string): void {
    this.post(() => this.keeper.withStore((store) => store.closeIncident(key, closedAt, closedBy)));
  }

  reserve(scopes: readonly string[], amount: BudgetAmount): Promise<Reservation> {
    return this.enqueue(() => this.budgets.reserve(scopes, amount));
  }

  settle(id: string, actual: BudgetAmount): Promise<void> {
    return this.enqueue(() => this.budgets.end(id, actual));
  }

  release(id: string): Promise<void> {
    return this.enqueue(() => this.budgets.end(id, null));
  }

  remaining(scope: string): Promise<BudgetStatus[]> {
    return this.enqueue(() => this.budgets.status().filter((s) => s.scope === scope));
  }

  /** Today's totals from `from` on, null while the database is unusable. */
  dayTotals(from: number): Promise<DayTotals | null> {
    return this.enqueue(() => (this.keeper.store ? this.keeper.store.dayTotals(from) : null));
  }

  /** Resolves once everything asked before it is done: a flush barrier. */
  sync(): Promise<void> {
    return this.enqueue(() => undefined);
  }

  /** Writes what is pending and closes the database. */
  close(): Promise<void> {
    return this.enqueue(() => {
      this.keeper.close();
      this.budgets.close();
    });
  }

  /** Runs `work` after everything asked before it; its result or failure is its caller's. */
  private enqueue<T>(work: () => T | Promise<T>): Promise<T> {
    const done = this.queue.then(work);
    this.queue = done.catch(() => undefined);
    return done;
  }

  /** Work no one waits for: a failure (only a bug: every database call has its own handling) is reported. */
  private post(work: () => void | Promise<void>): void {
    this.enqueue(work).catch((err: unknown) => {
      this.reports.degraded(this.settings?.path ?? '', `usage log: ${(err as Error).message}`);
    });
  }

  // ─── the work ─────────────────────────────────────────────────────────────

  private applySettings(next: EngineSettings): void {
    this.settings = { path: next.path, retentionDays: next.retentionDays, book: next.book, budgets: next.budgets, run: next.run };
    this.keeper.configure(next);
    this.budgets.report();
  }

  private async insertRows(requests: readonly LoggedRequest[]): Promise<void> {
    if (!this.keeper.store || !this.settings) {
      this.keeper.drop(requests.length);
      return;
    }
    if (this.counter === undefined && requests.some((r) => r.estimate && !r.usage)) this.counter = await tokenCounter();
    const { book, run = null } = this.settings;
    const rows: RequestRow[] = [];
    let sliceStart = performance.now();
    for (const request of requests) {
      rows.push(requestRow(request, book, this.counter, run));
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise(setImmediate);
        sliceStart = performance.now();
      }
    }
    const estimated = estimatedItems(rows);
    if (estimated.length > 0) this.reports.estimated(estimated);
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      const store = this.keeper.store;
      if (!store) {
        this.keeper.drop(chunk.length);
        continue;
      }
      try {
        store.insert(chunk);
      } catch (err) {
        this.keeper.drop(chunk.length);
        this.keeper.fail(err);
      }
      if (i + CHUNK < rows.length) await new Promise(setImmediate);
    }
  }
}
