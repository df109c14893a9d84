import type { Config, RollbackConfig } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import { tierKey } from '../health/health-view.js';
import { RollingWindow } from '../health/rolling-window.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { isHealthNeutral, type TelemetryEvent } from '../telemetry/events.js';
import type { WeightControl } from './weights.js';

interface Watched {
  route: string;
  tier: string;
  rules: RollbackConfig;
  window: RollingWindow;
}

/**
 * Automated rollback: for each tier with `rollback:`, a sliding window of its attempts; when
 * the window holds `min_requests` and its TTFT p99 or error rate breaches the threshold, the
 * tier's weight drops to 0 at once and a `rollback` event carries the numbers that tripped it.
 */
export class RollbackWatcher {
  private watched = new Map<string, Watched>();

  constructor(
    private readonly bus: TelemetryBus,
    private readonly weights: WeightControl,
    config: Config,
    private readonly now: () => number = Date.now,
  ) {
    this.configure(config);
    bus.subscribe(this.onEvent);
  }

  /** A reload starts every window afresh (the weights clear rollbacks at the same moment). */
  configure(config: Config): void {
    const next = new Map<string, Watched>();
    for (const tier of allTiers(config)) {
      if (!tier.rollback) continue;
      next.set(tierKey(tier.route, tier.name), {
        route: tier.route,
        tier: tier.name,
        rules: tier.rollback,
        window: new RollingWindow(tier.rollback.window_s * 1000, 2048),
      });
    }
    this.watched = next;
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    if (event.type !== 'attempt_end' || isHealthNeutral(event)) return;
    const watched = this.watched.get(tierKey(event.route, event.tier));
    if (!watched || this.weights.isRolledBack(watched.route, watched.tier)) return;
    const ok = event.record.outcome === 'ok';
    const now = this.now();
    watched.window.add(now, ok && event.stream ? event.record.ms : null, !ok);
    this.check(watched, now);
  };

  private check(watched: Watched, now: number): void {
    const { rules } = watched;
    const stats = watched.window.stats(now);
    if (stats.requests < rules.min_requests) return;
    if (rules.ttft_p99_ms !== undefined && stats.ttft && stats.ttft.p99 > rules.ttft_p99_ms) {
      return this.trip(watched, 'ttft_p99', stats.ttft.p99, rules.ttft_p99_ms, stats.requests);
    }
    if (rules.error_rate !== undefined && stats.errorRate > rules.error_rate) {
      this.trip(watched, 'error_rate', stats.errorRate, rules.error_rate, stats.requests);
    }
  }

  private trip(watched: Watched, reason: 'ttft_p99' | 'error_rate', observed: number, threshold: number, requests: number): void {
    watched.window.clear();
    const numbers =
      reason === 'ttft_p99'
        ? `TTFT p99 ${Math.round(observed)} ms > ${threshold} ms`
        : `error rate ${(observed * 100).toFixed(1)}% > ${(threshold * 100).toFixed(1)}%`;
    this.bus.emit({ type: 'rollback', route: watched.route, tier: watched.tier, reason, observed, threshold, requests, windowS: watched.rules.window_s });
    this.weights.rollBack(watched.route, watched.tier, `${numbers} over ${requests} requests in ${watched.rules.window_s} s`, watched.rules.restore_after_s);
  }
}
