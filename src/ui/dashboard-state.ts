import type { Config, Route } from '../config/schema.js';
import type { AttemptFinished, HealthChecked, RequestFinished, TelemetryEvent, WeightChanged } from '../telemetry/events.js';
import { isLimitSkip, provesTierAlive } from '../telemetry/events.js';
import {
  fitLine,
  healthCheckLine,
  limitSkipLine,
  providerOutputLine,
  reloadLines,
  rollbackLine,
  stateLine,
  tierStateLine,
  traceExportLine,
  unknownEndpointLine,
  usageLine,
  weightLine,
  type LogLine,
} from './model/log-lines.js';
import { HeldCalls } from './model/held-calls.js';
import { RateMeter } from './model/rate-meter.js';
import { recentRequest } from './model/request-path.js';
import { Ring } from './model/ring.js';
import { TierStatsTable } from './model/tier-stats.js';
import { SampleWindow } from './model/sample-window.js';
import { UsageToday } from './model/usage-today.js';
import type { DayTotals } from '../usage/store.js';
import { tierNoticeText } from '../health/tier-notice.js';
import { SaidOnce } from '../util/said-once.js';
import { type DashboardSnapshot, type RouteView, type SnapshotLimits, tierView } from './dashboard-view.js';

export type { DashboardSnapshot, RecentRequest, RouteView, SnapshotLimits, TierView } from './dashboard-view.js';
export type { LogLine, LogLevel } from './model/log-lines.js';
export type { Percentiles } from './model/sample-window.js';
export type { TierHealth } from './model/tier-stats.js';

const SKIP_LINE_EVERY_MS = 10_000;

interface OpenRequest {
  route: string;
  /** The tier relaying it once a stream committed. */
  committedTier: string | null;
}

interface Finished {
  at: number;
  event: RequestFinished;
}

/**
 * What the dashboard knows, built only from telemetry events (`apply`, O(1) each) and read against the current Config (`snapshot`, once per
 * rendered frame). The Config supplies tier order, provider/model and configured weights; the events supply everything that moves.
 */
export class DashboardState {
  private readonly tiers = new TierStatsTable();
  private readonly open = new Map<string, OpenRequest>();
  private readonly pendingByRoute = new Map<string, number>();
  private readonly held = new HeldCalls();
  private activeStreams = 0;
  private readonly arrivals = new RateMeter(10);
  private readonly finished = new Ring<Finished>(50);
  private readonly log = new Ring<LogLine>(200);
  /** What clients waited for their first token (arrival to commit), over the last 60 s. */
  private readonly clientTtft = new SampleWindow(200, 60_000);
  private readonly today = new UsageToday();
  private usageWarning: string | null = null;
  private stateWarning: string | null = null;
  /** Limit and budget skips per tier: when the last log line was written, and how many since. */
  private readonly skips = new Map<string, { at: number; more: number }>();
  /** Paths no endpoint serves, said once each per method. */
  private readonly unknownSaid = new SaidOnce();

  apply(event: TelemetryEvent, at: number): void {
    this.held.apply(event, at);
    switch (event.type) {
      case 'request_start':
        this.arrivals.mark(at);
        this.open.set(event.id, { route: event.route, committedTier: null });
        this.addPending(event.route, 1);
        return;
      case 'attempt_end':
        return this.countAttempt(event, at);
      case 'failover':
        this.tiers.get(event.route, event.fromTier).failovers++;
        return;
      case 'commit':
        return this.commit(event.id, event.route, event.tier, event.ttftMs, at);
      case 'request_end':
        return this.finish(event, at);
      case 'tier_state': {
        const stats = this.tiers.get(event.route, event.tier);
        stats.health = event.to;
        stats.healthReason = event.reason;
        return this.addLog(at, tierStateLine(event, at));
      }
      case 'weight':
        return this.changeWeight(event, at);
      case 'rollback': {
        const stats = this.tiers.get(event.route, event.tier);
        stats.rollbackLogged = true;
        return this.addLog(at, rollbackLine(event, stats.weight));
      }
      case 'reload':
        for (const line of reloadLines(event)) this.addLog(at, line);
        return;
      case 'health_check':
        return this.noteHealthCheck(event, at);
      case 'provider_output':
        return this.addLog(at, providerOutputLine(event));
      case 'chunk_error':
        return;
      case 'usage_degraded':
      case 'usage_recovered':
        this.usageWarning = event.type === 'usage_degraded' ? `usage log unusable (${event.error}); requests are served, rows dropped` : null;
        return this.addLog(at, usageLine(event));
      case 'trace_export_failing':
      case 'trace_export_recovered':
        return this.addLog(at, traceExportLine(event));
      case 'state_degraded':
        this.stateWarning = `shared state (Redis ${event.target}) unreachable: serving on local state, limits and budgets per instance`;
        return this.addLog(at, stateLine(event));
      case 'state_recovered':
        this.stateWarning = null;
        return this.addLog(at, stateLine(event));
      case 'fit_discovered':
        return this.addLog(at, fitLine(event));
      case 'prompt_truncated':
        return this.warnTruncation(event.route, event.tier, event, at);
      case 'tier_unavailable':
        return this.addLog(at, { level: 'warn', text: tierNoticeText(event) });
      case 'unknown_endpoint':
        if (this.unknownSaid.first(`${event.method} ${event.path}`)) this.addLog(at, unknownEndpointLine(event));
        return;
    }
  }

  /** Today's totals in the usage log when the dashboard started. */
  setUsageBaseline(totals: DayTotals, at: number): void {
    this.today.setBaseline(totals, at);
  }

  /** Whether the tier's kill switch is on (an admin override to 0), as the last weight event said. */
  killSwitchOn(route: string, tier: string): boolean {
    return this.tiers.peek(route, tier)?.weightLayers.admin?.weight === 0;
  }

  /** The weight a tier runs with now: as the last weight event said, else the configured one. */
  effectiveWeight(route: string, tier: string, configured: number): number {
    return this.tiers.peek(route, tier)?.weight ?? configured;
  }

  snapshot(config: Config, now: number, limits: SnapshotLimits = {}): DashboardSnapshot {
    const historyLength = limits.ttftHistory ?? 24;
    let pending = 0;
    for (const count of this.pendingByRoute.values()) pending += count;
    return {
      routes: [...config.routes.values()].map((route) => this.routeView(route, now, historyLength)),
      requestsPerSecond: this.arrivals.perSecond(now),
      activeStreams: this.activeStreams,
      pending,
      recent: this.finished.newest(limits.recent).map(({ at, event }) => recentRequest(at, event)),
      heldCalls: this.held.view(now),
      log: this.log.newest(limits.log).reverse(),
      clientTtft: this.clientTtft.percentiles(now),
      today: this.today.view(config, now),
      usageWarning: this.usageWarning,
      stateWarning: this.stateWarning,
    };
  }

  private routeView(route: Route, now: number, historyLength: number): RouteView {
    return {
      name: route.name,
      pending: this.pendingByRoute.get(route.name) ?? 0,
      tiers: route.tiers.map((tier) => tierView(route.name, tier, this.tiers.peek(route.name, tier.name), now, historyLength)),
    };
  }

  private countAttempt(event: AttemptFinished, at: number): void {
    // Skipped by llm-route's own limit or budget: the tier was not asked; a log line at most every 10 s per tier.
    if (isLimitSkip(event.record)) return this.noteSkip(event, at);
    // Skipped by the fit check (too long for its window), or for want of the client's own credential: nothing was sent, nothing to count.
    if (event.record.outcome === 'too_long' || event.record.outcome === 'no_client_credential') return;
    const stats = this.tiers.get(event.route, event.tier);
    // The tier's own TTFT: an ok streaming attempt's time, from its start to its first token.
    if (event.stream && event.record.outcome === 'ok') stats.ttft.record(event.record.ms, at);
    if (event.record.attempt === 1) stats.requests++;
    // The payload's fault, or a payload the tier cannot carry (context length, unsupported input), is not the tier's error.
    if (!provesTierAlive(event)) stats.errors++;
  }

  private commit(id: string, route: string, tier: string, ttftMs: number, at: number): void {
    const stats = this.tiers.get(route, tier);
    this.clientTtft.record(ttftMs, at);
    const request = this.open.get(id);
    if (request?.committedTier) return; // one commit per request
    if (request) {
      request.committedTier = tier;
      this.addPending(route, -1);
    } else {
      // Started before the dashboard subscribed: still relayed, so still live.
      this.open.set(id, { route, committedTier: tier });
    }
    stats.live++;
    this.activeStreams++;
  }

  private finish(event: RequestFinished, at: number): void {
    this.finished.push({ at, event });
    if (event.promptTruncated && event.tier) this.warnTruncation(event.route, event.tier, event.promptTruncated, at);
    this.today.add(event, at);
    if (event.outcome === 'interrupted' && event.tier) this.tiers.get(event.route, event.tier).errors++;
    if (event.usage?.cached_tokens !== undefined && event.tier) this.tiers.get(event.route, event.tier).cache.add(event.usage);
    const request = this.open.get(event.id);
    if (!request) return;
    this.open.delete(event.id);
    if (request.committedTier === null) {
      this.addPending(request.route, -1);
      return;
    }
    this.tiers.get(request.route, request.committedTier).live--;
    this.activeStreams--;
  }

  private changeWeight(event: WeightChanged, at: number): void {
    const stats = this.tiers.get(event.route, event.tier);
    const previous = stats.weight ?? event.configured;
    stats.weight = event.weight;
    stats.weightLayers = event.layers;
    const alreadyLogged = event.source === 'rollback' && stats.rollbackLogged;
    stats.rollbackLogged = false;
    // A reload re-announces every tier's weight; only a change is news.
    if (alreadyLogged || (event.source === 'reload' && previous === event.weight)) return;
    this.addLog(at, weightLine(event, previous));
  }

  /** Probes are asked for, so always shown; a keep-alive warm-up only the first time or when it fails. */
  private noteHealthCheck(event: HealthChecked, at: number): void {
    if (event.kind === 'warmup') {
      const stats = this.tiers.get(event.route, event.tier);
      const routine = event.ok && stats.warmedUp;
      stats.warmedUp ||= event.ok;
      if (routine) return;
    }
    const line = healthCheckLine(event);
    if (line) this.addLog(at, line);
  }

  private noteSkip(event: AttemptFinished, at: number): void {
    const k = `${event.route}\u0000${event.tier}`;
    const last = this.skips.get(k);
    if (last && at - last.at < SKIP_LINE_EVERY_MS) {
      last.more++;
      return;
    }
    this.skips.set(k, { at, more: 0 });
    this.addLog(at, limitSkipLine(event.route, event.record, last?.more ?? 0));
  }

  /** Once per tier: it read fewer prompt tokens than it was sent (Ollama cuts silently); its window is now what it read. */
  private warnTruncation(route: string, tier: string, { sent, read }: { sent: number; read: number }, at: number): void {
    const stats = this.tiers.get(route, tier);
    if (stats.truncationWarned) return;
    stats.truncationWarned = true;
    this.addLog(at, {
      level: 'bad',
      text: `${route}/${tier} cut a prompt silently: sent ${sent} tokens, it read ${read}; longer prompts now skip it (set its context or num_ctx)`,
    });
  }

  private addPending(route: string, delta: number): void {
    this.pendingByRoute.set(route, Math.max(0, (this.pendingByRoute.get(route) ?? 0) + delta));
  }

  private addLog(at: number, line: Omit<LogLine, 'at'>): void {
    this.log.push({ at, ...line });
  }
}
