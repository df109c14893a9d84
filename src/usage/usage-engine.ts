import type { Budget } from '../config/schema.js';
import { tokenCounter, type TokenCounter } from '../tokens/count.js';
import { LedgerTables } from './budgets/ledger-tables.js';
import { describeDbError } from './db-errors.js';
import { EngineBudgets } from './engine-budgets.js';
import type { EngineCall, EstimatedItem, FromEngine, ToEngine } from './messages.js';
import type { PriceBook } from './price-book.js';
import { type LoggedRequest, requestRow, type RequestRow } from './request-row.js';
import { UsageStore } from './store.js';

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

interface Settings {
  path: string;
  retentionDays: number;
  book: PriceBook;
  budgets: Budget[];
}

/**
 * The usage log's work: the database, the rows, the ledger. Messages are handled one after
 * another, in order. A database that cannot be opened or written (locked, corrupt, full,
 * unwritable) is reported once, rows meanwhile are dropped and counted, and opening is retried
 * with backoff; budgets are then enforced on counters in memory, which move to the file when it
 * is back. On the main thread, behind src/usage/engine-link.ts.
 */
export class UsageEngine {
  private settings: Settings | null = null;
  private store: UsageStore | null = null;
  private readonly budgets: EngineBudgets;
  private degraded: string | null = null;
  private dropped = 0;
  private retryDelay: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;
  private queue: Promise<void> = Promise.resolve();
  private counter: TokenCounter | undefined;
  private readonly now: () => number;

  constructor(private readonly send: (message: FromEngine) => void, private readonly options: EngineOptions = {}) {
    this.now = options.now ?? Date.now;
    this.retryDelay = options.retryBaseMs ?? 1_000;
    this.budgets = new EngineBudgets({
      budgets: () => this.settings?.budgets ?? [],
      now: this.now,
      holdMs: options.holdMs ?? 3_600_000,
      guard: (fn) => this.guard(fn),
    });
  }

  receive(message: ToEngine): void {
    this.queue = this.queue.then(() => this.handle(message)).catch((err: unknown) => {
      // Only a bug gets here: every database call has its own handling.
      this.send({ t: 'degraded', path: this.settings?.path ?? '', error: `usage log: ${(err as Error).message}` });
    });
  }

  private async handle(message: ToEngine): Promise<void> {
    switch (message.t) {
      case 'configure':
        return this.configure(message);
      case 'rows':
        return this.writeRows(message.requests);
      case 'incident_open':
        return this.withStore((store) => store.openIncident(message.incident));
      case 'incident_close':
        return this.withStore((store) => store.closeIncident(message.key, message.closedAt, message.closedBy));
      case 'call':
        try {
          this.send({ t: 'reply', id: message.id, ok: true, value: this.call(message.call) });
        } catch (err) {
          this.send({ t: 'reply', id: message.id, ok: false, error: (err as Error).message });
        }
        return;
    }
  }

  private configure(next: Settings): void {
    const reopen = this.settings?.path !== next.path;
    this.settings = { path: next.path, retentionDays: next.retentionDays, book: next.book, budgets: next.budgets };
    if (reopen) {
      this.closeStore();
      this.clearRetry();
      this.degraded = null;
      this.retryDelay = this.options.retryBaseMs ?? 1_000;
      this.open();
    } else if (this.store) {
      this.prune();
    }
    this.reportBudgets();
  }

  private async writeRows(requests: readonly LoggedRequest[]): Promise<void> {
    if (!this.store || !this.settings) {
      this.dropped += requests.length;
      return;
    }
    if (this.counter === undefined && requests.some((r) => r.estimate && !r.usage)) this.counter = await tokenCounter();
    const book = this.settings.book;
    const rows: RequestRow[] = [];
    let sliceStart = performance.now();
    for (const request of requests) {
      rows.push(requestRow(request, book, this.counter));
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise(setImmediate);
        sliceStart = performance.now();
      }
    }
    this.reportEstimated(rows);
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

  private reportEstimated(rows: readonly RequestRow[]): void {
    const items: EstimatedItem[] = [];
    for (const row of rows) {
      if (row.tier === null || row.tokenSource === 'upstream' || row.tokenSource === null) continue;
      items.push({ route: row.route, tier: row.tier, costUsd: row.costUsd, prompt: row.promptTokens, completion: row.completionTokens, cached: row.cachedTokens });
    }
    if (items.length > 0) this.send({ t: 'estimated', items });
  }

  private call(call: EngineCall): unknown {
    switch (call.op) {
      case 'reserve': {
        const reservation = this.budgets.reserve(call.scopes, call.amount);
        this.reportBudgets();
        return reservation;
      }
      case 'settle':
        this.budgets.end(call.reservation, call.actual);
        this.reportBudgets();
        return null;
      case 'release':
        this.budgets.end(call.reservation, null);
        this.reportBudgets();
        return null;
      case 'remaining':
        return this.budgets.status().filter((s) => s.scope === call.scope);
      case 'day_totals':
        return this.store ? this.store.dayTotals(call.from) : null;
      case 'sync':
        return { dropped: this.dropped, degraded: this.degraded };
      case 'close':
        this.closeStore();
        this.budgets.close();
        this.clearRetry();
        return { dropped: this.dropped };
    }
  }

  private reportBudgets(): void {
    if ((this.settings?.budgets.length ?? 0) > 0) this.send({ t: 'budgets', status: this.budgets.status() });
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
    this.pruneTimer = setInterval(() => {
      this.queue = this.queue.then(() => this.prune());
    }, DAY_MS);
    this.pruneTimer.unref();
    this.budgets.moveMemorySpend();
    if (this.degraded !== null) {
      this.send({ t: 'recovered', path: settings.path, dropped: this.dropped });
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
      this.send({ t: 'degraded', path, error: this.degraded });
    }
    if (this.retryTimer === null && this.settings) {
      const delay = this.retryDelay;
      this.retryDelay = Math.min(delay * 2, this.options.retryMaxMs ?? 30_000);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.queue = this.queue.then(() => {
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
