import type { Budget } from '../config/schema.js';
import { tokenCounter, type TokenCounter } from '../tokens/count.js';
import type { BudgetAmount, BudgetLedger, BudgetStatus, Reservation } from './budgets/ledger.js';
import { LedgerTables } from './budgets/ledger-tables.js';
import { describeDbError } from './db-errors.js';
import { EngineBudgets } from './budgets/engine-budgets.js';
import type { PriceBook } from './price-book.js';
import { type EstimatedItem, estimatedItems, type LoggedRequest, requestRow, type RequestRow } from './request-row.js';
import { type DayTotals, type IncidentOpen, UsageStore } from './store.js';

export interface EngineOptions {
  /** First wait before reopening an unusable database; doubles up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  busyTimeoutMs?: number;
  /** See StoreOptions.maxPageCount. */
  maxPageCount?: number;
  /** How long a reservation holds its amount when it is never settled (its process died). */
  holdMs?: number;
  now?: () => number;
}

const DAY_MS = 86_400_000;
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
 * the main thread, loaded at first need by src/usage/engine-link.ts.
 */
export class UsageEngine implements BudgetLedger {
  private settings: EngineSettings | null = null;
  private store: UsageStore | null = null;
  private readonly budgets: EngineBudgets;
  private degraded: string | null = null;
  private dropped = 0;
  private retryDelay: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private counter: TokenCounter | undefined;
  private readonly now: () => number;

  constructor(
    private readonly reports: EngineReports,
    private readonly options: EngineOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.retryDelay = options.retryBaseMs ?? 1_000;
    this.budgets = new EngineBudgets({
      budgets: () => this.settings?.budgets ?? [],
      now: this.now,
      holdMs: options.holdMs ?? 3_600_000,
      guard: (fn) => this.guard(fn),
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
    this.post(() => this.withStore((store) => store.openIncident(incident)));
  }

  closeIncident(key: string, closedAt: number, closedBy: string): void {
    this.post(() => this.withStore((store) => store.closeIncident(key, closedAt, closedBy)));
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
    return this.enqueue(() => (this.store ? this.store.dayTotals(from) : null));
  }

  /** Resolves once everything asked before it is done: a flush barrier. */
  sync(): Promise<void> {
    return this.enqueue(() => undefined);
  }

  /** Writes what is pending and closes the database. */
  close(): Promise<void> {
    return this.enqueue(() => {
      this.closeStore();
      this.budgets.close();
      this.clearRetry();
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
    const reopen = this.settings?.path !== next.path;
    this.settings = { path: next.path, retentionDays: next.retentionDays, book: next.book, budgets: next.budgets, run: next.run };
    if (reopen) {
      this.closeStore();
      this.clearRetry();
      this.degraded = null;
      this.retryDelay = this.options.retryBaseMs ?? 1_000;
      this.open();
    } else if (this.store) {
      this.prune();
    }
    this.budgets.report();
  }

  private async insertRows(requests: readonly LoggedRequest[]): Promise<void> {
    if (!this.store || !this.settings) {
      this.dropped += requests.length;
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
      if (!this.store) {
        this.dropped += chunk.length;
        continue;
      }
      try {
        this.store.insert(chunk);
      } catch (err) {
        this.dropped += chunk.length;
        this.fail(err);
      }
      if (i + CHUNK < rows.length) await new Promise(setImmediate);
    }
  }

  // ─── opening, failing, retrying ───────────────────────────────────────────

  private open(): void {
    const settings = this.settings;
    if (!settings) return;
    try {
      const store = new UsageStore(settings.path, { busyTimeoutMs: this.options.busyTimeoutMs, maxPageCount: this.options.maxPageCount });
      this.store = store;
      this.budgets.useFile(new LedgerTables(store.db));
    } catch (err) {
      this.fail(err);
      return;
    }
    this.prune();
    this.pruneTimer = setInterval(() => this.post(() => this.prune()), DAY_MS);
    this.pruneTimer.unref();
    this.budgets.moveMemorySpend();
    if (this.degraded !== null) {
      this.reports.recovered(settings.path, this.dropped);
      this.degraded = null;
      this.dropped = 0;
      this.retryDelay = this.options.retryBaseMs ?? 1_000;
    }
  }

  private prune(): void {
    const settings = this.settings;
    if (!settings) return;
    this.guard(() => this.store?.prune(this.now() - settings.retentionDays * DAY_MS));
  }

  /** Runs a database call; a failure degrades the store instead of escaping. */
  private guard(fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      this.fail(err);
    }
  }

  private withStore(fn: (store: UsageStore) => void): void {
    if (this.store) this.guard(() => fn(this.store as UsageStore));
  }

  private fail(err: unknown): void {
    this.closeStore();
    const path = this.settings?.path ?? '';
    if (this.degraded === null) {
      this.degraded = describeDbError(err);
      this.reports.degraded(path, this.degraded);
    }
    if (this.retryTimer === null && this.settings) {
      const delay = this.retryDelay;
      this.retryDelay = Math.min(delay * 2, this.options.retryMaxMs ?? 30_000);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.post(() => {
          if (!this.store) this.open();
        });
      }, delay);
      this.retryTimer.unref();
    }
  }

  private clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private closeStore(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = null;
    try {
      this.store?.close();
    } catch {
      // closing a broken database can fail too; it is let go either way
    }
    this.store = null;
    this.budgets.useFile(null);
  }
}
