import { describeDbError } from './db-errors.js';
import { UsageStore } from './store.js';

const DAY_MS = 86_400_000;

/** Where the database is and how long its rows are kept (from the engine's settings). */
export interface KeptDatabase {
  path: string;
  retentionDays: number;
}

export interface KeeperOptions {
  /** First wait before reopening an unusable database; doubles up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  busyTimeoutMs?: number;
  /** See StoreOptions.maxPageCount. */
  maxPageCount?: number;
}

/** What the keeper asks of the engine around it. */
export interface KeeperHooks {
  /** Runs work on the engine's queue, after everything asked before it (retries, daily prunes). */
  post(work: () => void): void;
  /** The database became unusable (reported once until it recovers). */
  degraded(path: string, error: string): void;
  /** It is usable again; `dropped` rows were lost meanwhile. */
  recovered(path: string, dropped: number): void;
  /** The store is open (its tables now hold the budget ledger), or gone (null). */
  attach(store: UsageStore | null): void;
  /** Just opened and pruned: what waited for the file (budget spend kept in memory) moves to it. */
  opened(): void;
}

/**
 * Keeps the usage database open for the engine: opens it, prunes it daily, and when it cannot
 * be opened or written (locked, corrupt, full, unwritable) closes it, reports that once, counts
 * what is dropped meanwhile and retries with backoff until it is back. Its timers only post
 * work to the engine's queue, so a reopen never runs in the middle of other work.
 */
export class StoreKeeper {
  store: UsageStore | null = null;
  private database: KeptDatabase | null = null;
  private degraded: string | null = null;
  private dropped = 0;
  private retryDelay: number;
  private retryTimer: NodeJS.Timeout | null = null;
  private pruneTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly hooks: KeeperHooks,
    private readonly options: KeeperOptions,
    private readonly now: () => number,
  ) {
    this.retryDelay = options.retryBaseMs ?? 1_000;
  }

  /** Another path reopens the database; the same one is pruned with the (maybe new) retention. */
  configure(next: KeptDatabase): void {
    const reopen = this.database?.path !== next.path;
    this.database = { path: next.path, retentionDays: next.retentionDays };
    if (reopen) {
      this.closeStore();
      this.clearRetry();
      this.degraded = null;
      this.retryDelay = this.options.retryBaseMs ?? 1_000;
      this.open();
    } else if (this.store) {
      this.prune();
    }
  }

  /** Rows that could not be written: counted, and told with the recovery. */
  drop(rows: number): void {
    this.dropped += rows;
  }

  /** Runs a database call; a failure degrades the store instead of escaping. */
  guard(fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      this.fail(err);
    }
  }

  withStore(fn: (store: UsageStore) => void): void {
    if (this.store) this.guard(() => fn(this.store as UsageStore));
  }

  /** A database call failed: the store closes, the failure is reported once, a reopen is timed. */
  fail(err: unknown): void {
    this.closeStore();
    const path = this.database?.path ?? '';
    if (this.degraded === null) {
      this.degraded = describeDbError(err);
      this.hooks.degraded(path, this.degraded);
    }
    if (this.retryTimer === null && this.database) {
      const delay = this.retryDelay;
      this.retryDelay = Math.min(delay * 2, this.options.retryMaxMs ?? 30_000);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.hooks.post(() => {
          if (!this.store) this.open();
        });
      }, delay);
      this.retryTimer.unref();
    }
  }

  close(): void {
    this.closeStore();
    this.clearRetry();
  }

  private open(): void {
    const database = this.database;
    if (!database) return;
    try {
      const store = new UsageStore(database.path, { busyTimeoutMs: this.options.busyTimeoutMs, maxPageCount: this.options.maxPageCount });
      this.store = store;
      this.hooks.attach(store);
    } catch (err) {
      this.fail(err);
      return;
    }
    this.prune();
    this.pruneTimer = setInterval(() => this.hooks.post(() => this.prune()), DAY_MS);
    this.pruneTimer.unref();
    this.hooks.opened();
    if (this.degraded !== null) {
      this.hooks.recovered(database.path, this.dropped);
      this.degraded = null;
      this.dropped = 0;
      this.retryDelay = this.options.retryBaseMs ?? 1_000;
    }
  }

  private prune(): void {
    const database = this.database;
    if (!database) return;
    this.guard(() => this.store?.prune(this.now() - database.retentionDays * DAY_MS));
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
    this.hooks.attach(null);
  }
}
