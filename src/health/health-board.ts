import { loadedOf } from './loaded-models.js';
import type { Config, Tier } from '../config/schema.js';
import { allTiers } from '../config/all-tiers.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { type AttemptFinished, type HealthChecked, isHealthNeutral, provesTierAlive, type TelemetryEvent } from '../telemetry/events.js';
import { Circuit } from './circuit.js';
import { type TierState, tierKey } from './health-view.js';
import { RollingWindow, type WindowStats } from './rolling-window.js';

/** The window of a tier's recent requests (its health verdict, and "recent" in /admin/routes). */
export const HEALTH_WINDOW_MS = 60_000;
/** Degraded by errors: at least this many requests in the window, this share failing. */
const DEGRADED_MIN_REQUESTS = 8;
const DEGRADED_ERROR_RATE = 0.25;
/** Degraded by slowness: at least this many TTFT samples with a median above slow_ttft_ms. */
const DEGRADED_MIN_TTFTS = 5;
/** The window verdict is recomputed at most this often per tier: it is off the hot path. */
const WINDOW_VERDICT_MS = 500;

interface TierHealth {
  tier: Tier;
  circuit: Circuit;
  window: RollingWindow;
  state: TierState;
  /** Epoch ms of the last success (0: never), for the cold-start budget. */
  lastSuccessAt: number;
  lastError: string | null;
  attempts: number;
  failures: number;
  windowVerdict: TierState;
  windowVerdictAt: number;
}

export interface TierHealthView {
  state: TierState;
  consecutive_failures: number;
  retry_at: string | null;
  last_error: string | null;
  attempts: number;
  failures: number;
  window: WindowStats;
}

/**
 * Per-tier health, fed by every attempt's outcome and every active check (telemetry events):
 * `down` while the circuit is open, `degraded` on slow TTFT or rising errors, else `healthy`.
 * Transport failures count against every tier of the provider; model-level ones against the tier.
 */
export class HealthBoard {
  private tiers = new Map<string, TierHealth>();

  constructor(
    private readonly bus: TelemetryBus,
    config: Config,
    private readonly now: () => number = Date.now,
  ) {
    this.configure(config);
    bus.subscribe(this.onEvent);
  }

  /** Takes a (re)loaded config: known tiers keep their history, new ones start healthy. */
  configure(config: Config): void {
    const next = new Map<string, TierHealth>();
    for (const tier of allTiers(config)) {
      const k = tierKey(tier.route, tier.name);
      const existing = this.tiers.get(k);
      if (existing) {
        existing.tier = tier;
        existing.circuit.configure(tier.circuit);
        next.set(k, existing);
      } else {
        next.set(k, {
          tier,
          circuit: new Circuit(tier.circuit),
          window: new RollingWindow(HEALTH_WINDOW_MS),
          state: 'healthy',
          lastSuccessAt: 0,
          lastError: null,
          attempts: 0,
          failures: 0,
          windowVerdict: 'healthy',
          windowVerdictAt: 0,
        });
      }
    }
    this.tiers = next;
  }

  allows(tier: Tier): boolean {
    const health = this.tiers.get(tierKey(tier.route, tier.name));
    return health === undefined || health.circuit.isAvailable(this.now());
  }

  claim(tier: Tier): boolean {
    const health = this.tiers.get(tierKey(tier.route, tier.name));
    if (!health) return true;
    // A trial's claim lapses after the longest it could take to commit, so a lost trial cannot wedge the tier.
    return health.circuit.claim(this.now(), tier.timeouts.cold_ttft_ms + tier.timeouts.connect_ms);
  }

  isCold(tier: Tier): boolean {
    // The server's word wins over the guess both ways: a model it lists as loaded is warm before its first answer.
    const loaded = loadedOf(tier);
    if (loaded !== undefined) return !loaded;
    const health = this.tiers.get(tierKey(tier.route, tier.name));
    return health === undefined || this.now() - health.lastSuccessAt > tier.timeouts.cold_after_ms;
  }

  view(route: string, tier: string): TierHealthView | null {
    const health = this.tiers.get(tierKey(route, tier));
    if (!health) return null;
    return {
      state: health.state,
      consecutive_failures: health.circuit.failuresInARow,
      retry_at: health.circuit.retryAt ? new Date(health.circuit.retryAt).toISOString() : null,
      last_error: health.lastError,
      attempts: health.attempts,
      failures: health.failures,
      window: health.window.stats(this.now()),
    };
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    if (event.type === 'attempt_end') this.onAttempt(event);
    else if (event.type === 'health_check') this.onCheck(event);
  };

  private onAttempt(event: AttemptFinished): void {
    if (isHealthNeutral(event)) {
      if (provesTierAlive(event)) this.provedAlive(event);
      return;
    }
    const now = this.now();
    const ok = event.record.outcome === 'ok';
    const ttft = ok && event.stream ? event.record.ms : null;
    const error = ok ? null : (event.record.message ?? event.record.outcome);
    if (event.blame === 'provider') {
      for (const health of this.tiers.values()) {
        if (health.tier.provider.name === event.provider) this.record(health, now, false, null, error, `${event.record.outcome} (provider ${event.provider})`);
      }
      return;
    }
    const health = this.tiers.get(tierKey(event.route, event.tier));
    if (health) this.record(health, now, ok, ttft, error, ok ? 'a request succeeded' : event.record.outcome);
  }

  /**
   * A tier whose circuit is open answered (its half-open trial got an answer the payload is to
   * blame for): it is alive, so the circuit closes rather than the trial being spent on it.
   */
  private provedAlive(event: AttemptFinished): void {
    const health = this.tiers.get(tierKey(event.route, event.tier));
    if (!health?.circuit.isOpen) return;
    if (health.circuit.recordSuccess())
      this.update(health, `it answered the half-open trial (${event.record.outcome}${event.record.status ? ` ${event.record.status}` : ''})`);
  }

  private onCheck(event: HealthChecked): void {
    const health = this.tiers.get(tierKey(event.route, event.tier));
    // A server still loading its model is neither: requests fail over meanwhile on their own.
    if (!health || event.loading) return;
    const now = this.now();
    if (event.ok) {
      // Only a check that got a token out of the chat endpoint proves what requests need (and
      // loaded the model); a passing model list says nothing about a chat endpoint that fails.
      if (event.ttftMs === null) return;
      health.lastSuccessAt = now;
      // Closes an open circuit, and ends a "failing" degraded state a failed check had started.
      health.circuit.recordSuccess();
      this.update(health, `${event.kind} succeeded`);
      return;
    }
    // A failed check opens the circuit as a failed request would, without polluting request stats.
    health.lastError = event.error ?? `${event.kind} failed`;
    health.circuit.recordFailure(now);
    this.update(health, `${event.kind}: ${health.lastError}`);
  }

  private record(health: TierHealth, now: number, ok: boolean, ttftMs: number | null, error: string | null, reason: string): void {
    health.attempts++;
    health.window.add(now, ttftMs, !ok);
    if (ok) {
      health.lastSuccessAt = now;
      health.circuit.recordSuccess();
    } else {
      health.failures++;
      health.lastError = error;
      health.circuit.recordFailure(now);
    }
    this.update(health, reason);
  }

  /** `trigger`: what just happened; the `tier_state` reason says what it did to the state. */
  private update(health: TierHealth, trigger: string): void {
    const next = this.assess(health);
    if (next === health.state) return;
    const from = health.state;
    health.state = next;
    const { route, name } = health.tier;
    this.bus.emit({
      type: 'tier_state',
      route,
      tier: name,
      from,
      to: next,
      reason: this.explain(health, next, trigger),
      ...(next === 'down' ? { retryAt: health.circuit.retryAt } : {}),
    });
  }

  private assess(health: TierHealth): TierState {
    if (health.circuit.isOpen) return 'down';
    if (health.circuit.failuresInARow > 0) return 'degraded';
    const now = this.now();
    if (now - health.windowVerdictAt >= WINDOW_VERDICT_MS) {
      health.windowVerdictAt = now;
      health.windowVerdict = this.windowVerdict(health, now).state;
    }
    return health.windowVerdict;
  }

  /** The reason a move to `state` is shown with: the numbers that did it, not just the last outcome. */
  private explain(health: TierHealth, state: TierState, trigger: string): string {
    const inARow = health.circuit.failuresInARow;
    if (state === 'down') return `circuit open after ${inARow} failure${inARow === 1 ? '' : 's'} in a row (last: ${trigger})`;
    if (inARow > 0) return `failing: ${trigger} (${inARow} in a row)`;
    if (state === 'degraded') return this.windowVerdict(health, this.now()).why;
    return trigger;
  }

  /** Degraded by the last minute: a high error rate, or a slow TTFT median. */
  private windowVerdict(health: TierHealth, now: number): { state: TierState; why: string } {
    const stats = health.window.stats(now);
    const windowS = Math.round(HEALTH_WINDOW_MS / 1000);
    if (stats.requests >= DEGRADED_MIN_REQUESTS && stats.errorRate >= DEGRADED_ERROR_RATE) {
      return { state: 'degraded', why: `errors: ${Math.round(stats.errorRate * 100)}% of ${stats.requests} in ${windowS} s` };
    }
    const slow = health.tier.circuit.slow_ttft_ms;
    if (stats.ttft && stats.ttft.samples >= DEGRADED_MIN_TTFTS && stats.ttft.p50 > slow) {
      return { state: 'degraded', why: `slow: ttft p50 ${seconds(stats.ttft.p50)} > ${seconds(slow)}` };
    }
    return { state: 'healthy', why: 'the last minute is fine' };
  }
}

/** `2.1 s`; `850 ms` below a second. */
function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
