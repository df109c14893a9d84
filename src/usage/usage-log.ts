import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { RequestFinished, TelemetryEvent } from '../telemetry/events.js';
import type { BudgetLedger, BudgetStatus } from './budgets/ledger.js';
import { LedgerClient } from './budgets/ledger-client.js';
import { EngineLink } from './engine-link.js';
import { IncidentTracker } from './incidents/tracker.js';
import { usagePath } from './paths.js';
import { priceBook } from './price-book.js';
import type { DayTotals, IncidentOpen } from './store.js';
import { budgetWindow } from './budgets/windows.js';
import { UsageMetrics } from './usage-metrics.js';
import type { EngineOptions, EngineReports, UsageEngine } from './usage-engine.js';

export interface UsageLogOptions extends EngineOptions {
  /** Rows wait at most this long before they are written (docs/usage.md: a SIGKILL loses at most the last second). */
  flushMs?: number;
  /** ...or until this many are waiting. */
  maxRows?: number;
  /** Where llm_cost_usd_total, llm_tokens_total{kind="cached"} and llm_budget_remaining go. */
  registry?: Registry;
  /** How long a tier must be down to be an incident (docs/usage.md: 30 s). */
  incidentDownAfterMs?: number;
}

const CLOSE_TIMEOUT_MS = 10_000;

/**
 * The usage log, from the proxy's side: finished requests are queued as they are (O(1) per
 * event, nothing else on the request path) and go to the usage engine in batches, every
 * `flushMs` or `maxRows`. Owns the budgets ledger's link to the same database, the
 * incident tracker and the usage metrics.
 */
export class UsageLog {
  readonly budgets: BudgetLedger;
  private readonly ledger: LedgerClient;
  private readonly metrics: UsageMetrics | null;
  private readonly incidents: IncidentTracker;
  private link: EngineLink | null = null;
  private config: Config;
  private queue: RequestFinished[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushSoon = false;
  private readonly flushMs: number;
  private readonly maxRows: number;
  private degradedError: string | null = null;
  /** llm_budget_remaining is fed by another ledger (Redis): this database's budget reports are ignored. */
  private budgetsElsewhere = false;
  private logging = false;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** Today's totals in the database before this process wrote to it (asked for first thing, so no row of ours is in them). */
  readonly startTotals: Promise<DayTotals | null>;
  /**
   * This process's name in the rows it writes (`run`): other processes (a serve, another exec)
   * may write the same database at the same time; exec's exit summary and `usage --run` read
   * one run's rows. Ten base-36 characters: unique enough among the runs of one database.
   */
  readonly run = Array.from({ length: 10 }, () => Math.floor(Math.random() * 36).toString(36)).join('');

  constructor(
    private readonly bus: TelemetryBus,
    config: Config,
    private readonly options: UsageLogOptions = {},
  ) {
    this.config = config;
    this.flushMs = options.flushMs ?? 200;
    this.maxRows = options.maxRows ?? 1_000;
    this.ledger = new LedgerClient(config.budgets, (call) => this.use(call));
    this.budgets = this.ledger;
    this.metrics = options.registry ? new UsageMetrics(options.registry, config) : null;
    this.incidents = new IncidentTracker(
      { open: (incident) => this.openIncident(incident), close: (key, at, by) => this.closeIncident(key, at, by) },
      options.now,
      options.incidentDownAfterMs,
    );
    this.unsubscribe = bus.subscribe(this.onEvent);
    this.configure(config);
    this.startTotals = config.usage.enabled ? this.dayTotals((options.now ?? Date.now)()).catch(() => null) : Promise.resolve(null);
  }

  /** The database file rows go to. */
  get path(): string {
    return usagePath(this.config);
  }

  /** Why the database is unusable now, or null. */
  get degraded(): string | null {
    return this.degradedError;
  }

  /** A (re)loaded config: the log turns on or off, moves to a new path, takes new prices and budgets. */
  configure(config: Config): void {
    this.config = config;
    this.ledger.configure(config.budgets);
    this.metrics?.configure(config);
    this.logging = config.usage.enabled;
    const needed = config.usage.enabled || config.budgets.length > 0;
    if (needed && !this.link && !this.closed) this.link = new EngineLink(this.engineReports, this.options);
    if (!this.link) return;
    if (!config.usage.enabled) this.queue = [];
    const settings = { path: usagePath(config), retentionDays: config.usage.retention_days, book: priceBook(config), budgets: config.budgets, run: this.run };
    void this.link.run((engine) => engine.configure(settings), true);
  }

  /** For a ledger other than this database's: what sets llm_budget_remaining from its statuses. */
  takeBudgetGauge(): (status: readonly BudgetStatus[]) => void {
    this.budgetsElsewhere = true;
    return (status) => this.metrics?.setBudgets(status);
  }

  /** Resolves once every request finished so far is written (or counted as dropped). */
  async flush(): Promise<void> {
    this.writeQueued();
    if (this.link) await this.use((engine) => engine.sync());
  }

  /** Today's totals in the database (UTC day), null when it is unusable or the log is off. */
  async dayTotals(now = Date.now()): Promise<DayTotals | null> {
    if (!this.link) return null;
    const from = budgetWindow('day', now).start;
    return this.link.run((engine) => engine.dayTotals(from), true);
  }

  /** Writes what is queued, closes open incidents ("shutdown") and the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.incidents.closeAll('shutdown');
    this.writeQueued();
    this.closed = true;
    this.unsubscribe();
    this.incidents.stop();
    const link = this.link;
    if (!link) return;
    try {
      await Promise.race([link.run((engine) => engine.close()), new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref())]);
    } finally {
      this.link = null;
      link.stop();
    }
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    if (this.closed) return;
    if (event.type === 'request_end') {
      this.metrics?.onRequest(event);
      if (!this.logging || !this.link) return;
      this.queue.push(event);
      if (this.queue.length >= this.maxRows) this.scheduleSoon();
      else if (this.timer === null) {
        this.timer = setTimeout(this.writeQueued, this.flushMs);
        this.timer.unref();
      }
      return;
    }
    if (this.logging) this.incidents.onEvent(event);
  };

  private scheduleSoon(): void {
    if (this.flushSoon) return;
    this.flushSoon = true;
    setImmediate(this.writeQueued);
  }

  private readonly writeQueued = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushSoon = false;
    const requests = this.queue;
    if (requests.length === 0 || !this.link) return;
    this.queue = [];
    void this.link.run((engine) => engine.writeRows(requests));
  };

  private openIncident(incident: IncidentOpen): void {
    void this.link?.run((engine) => engine.openIncident(incident));
  }

  private closeIncident(key: string, closedAt: number, closedBy: string): void {
    void this.link?.run((engine) => engine.closeIncident(key, closedAt, closedBy));
  }

  /** A call on the engine, loading it now if it has not loaded; rejects once the log is closed. */
  private use<T>(call: (engine: UsageEngine) => Promise<T>): Promise<T> {
    return this.link ? this.link.run(call) : Promise.reject(new Error('the usage log is closed'));
  }

  /** What the engine reports, until the log has closed. */
  private readonly engineReports: EngineReports = {
    degraded: (path, error) => {
      if (!this.link) return;
      this.degradedError = error;
      this.bus.emit({ type: 'usage_degraded', path: path || this.path, error });
    },
    recovered: (path, dropped) => {
      if (!this.link) return;
      this.degradedError = null;
      this.bus.emit({ type: 'usage_recovered', path, dropped });
    },
    estimated: (items) => {
      if (this.link) for (const item of items) this.metrics?.addEstimated(item);
    },
    budgets: (status) => {
      if (this.link && !this.budgetsElsewhere) this.metrics?.setBudgets(status);
    },
  };
}
