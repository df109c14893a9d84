import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { RequestFinished, TelemetryEvent } from '../telemetry/events.js';
import type { BudgetLedger, BudgetStatus } from './budgets/ledger.js';
import { LedgerClient } from './budgets/ledger-client.js';
import { startEngine, type EngineLink } from './engine-link.js';
import { IncidentTracker } from './incidents/tracker.js';
import type { EngineCall, FromEngine } from './messages.js';
import { usagePath } from './paths.js';
import { priceBook } from './price-book.js';
import type { DayTotals, IncidentOpen } from './store.js';
import { budgetWindow } from './budgets/windows.js';
import { UsageMetrics } from './usage-metrics.js';
import type { EngineOptions } from './usage-engine.js';

export interface UsageLogOptions extends EngineOptions {
  /** Rows wait at most this long before they are written (SPEC: a SIGKILL loses at most the last second). */
  flushMs?: number;
  /** ...or until this many are waiting. */
  maxRows?: number;
  /** Where llm_cost_usd_total, llm_tokens_total{kind="cached"} and llm_budget_remaining go. */
  registry?: Registry;
  /** How long a tier must be down to be an incident (SPEC: 30 s). */
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
  private nextCall = 1;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
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

  constructor(private readonly bus: TelemetryBus, config: Config, private readonly options: UsageLogOptions = {}) {
    this.config = config;
    this.flushMs = options.flushMs ?? 200;
    this.maxRows = options.maxRows ?? 1_000;
    this.ledger = new LedgerClient(config.budgets, (call) => this.call(call));
    this.budgets = this.ledger;
    this.metrics = options.registry ? new UsageMetrics(options.registry, config) : null;
    this.incidents = new IncidentTracker({ open: (incident) => this.openIncident(incident), close: (key, at, by) => this.closeIncident(key, at, by) }, options.now, options.incidentDownAfterMs);
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
    if (needed && !this.link && !this.closed) this.link = startEngine(this.onEngineMessage, this.options);
    if (!this.link) return;
    if (!config.usage.enabled) this.queue = [];
    this.link.post({ t: 'configure', path: usagePath(config), retentionDays: config.usage.retention_days, book: priceBook(config), budgets: config.budgets });
  }

  /** For a ledger other than this database's: what sets llm_budget_remaining from its statuses. */
  takeBudgetGauge(): (status: readonly BudgetStatus[]) => void {
    this.budgetsElsewhere = true;
    return (status) => this.metrics?.setBudgets(status);
  }

  /** Resolves once every request finished so far is written (or counted as dropped). */
  async flush(): Promise<void> {
    this.writeQueued();
    if (this.link) await this.call({ op: 'sync' });
  }

  /** Today's totals in the database (UTC day), null when it is unusable or the log is off. */
  async dayTotals(now = Date.now()): Promise<DayTotals | null> {
    if (!this.link) return null;
    return (await this.call({ op: 'day_totals', from: budgetWindow('day', now).start })) as DayTotals | null;
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
      await Promise.race([this.call({ op: 'close' }), new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref())]);
    } finally {
      this.link = null;
      for (const waiting of this.pending.values()) waiting.reject(new Error('the usage log is closed'));
      this.pending.clear();
      await link.stop();
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
    this.link.post({ t: 'rows', requests });
  };

  private openIncident(incident: IncidentOpen): void {
    this.link?.post({ t: 'incident_open', incident });
  }

  private closeIncident(key: string, closedAt: number, closedBy: string): void {
    this.link?.post({ t: 'incident_close', key, closedAt, closedBy });
  }

  private call(call: EngineCall): Promise<unknown> {
    const link = this.link;
    if (!link) return Promise.reject(new Error('the usage log is closed'));
    const id = this.nextCall++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      link.post({ t: 'call', id, call });
    });
  }

  private readonly onEngineMessage = (message: FromEngine): void => {
    switch (message.t) {
      case 'reply': {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.ok) waiting.resolve(message.value);
        else waiting.reject(new Error(message.error));
        return;
      }
      case 'degraded':
        this.degradedError = message.error;
        this.bus.emit({ type: 'usage_degraded', path: message.path || this.path, error: message.error });
        return;
      case 'recovered':
        this.degradedError = null;
        this.bus.emit({ type: 'usage_recovered', path: message.path, dropped: message.dropped });
        return;
      case 'estimated':
        for (const item of message.items) this.metrics?.addEstimated(item);
        return;
      case 'budgets':
        if (!this.budgetsElsewhere) this.metrics?.setBudgets(message.status as BudgetStatus[]);
        return;
    }
  };
}
