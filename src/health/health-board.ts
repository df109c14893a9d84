import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { TelemetryEvent } from '../telemetry/events.js';
import type { HealthView, TierState } from './health-view.js';

interface TierHealth {
  state: TierState;
  attempts: number;
  failures: number;
  consecutiveFailures: number;
  lastOutcome: string | null;
  lastError: string | null;
}

/**
 * Per-tier health, fed only by telemetry events. For now a tier is `degraded` while its
 * latest attempts fail; the circuit breaker that marks it `down` plugs in here.
 */
export class HealthBoard implements HealthView {
  private tiers = new Map<string, TierHealth>();

  constructor(bus: TelemetryBus) {
    bus.subscribe(this.onEvent);
  }

  state(route: string, tier: string): TierState {
    return this.tiers.get(key(route, tier))?.state ?? 'healthy';
  }

  snapshot(config: Config): Record<string, { tiers: Array<Record<string, unknown>> }> {
    const routes: Record<string, { tiers: Array<Record<string, unknown>> }> = {};
    for (const route of config.routes.values()) {
      routes[route.name] = {
        tiers: route.tiers.map((tier) => {
          const health = this.tiers.get(key(route.name, tier.name));
          return {
            name: tier.name,
            provider: tier.provider.name,
            model: tier.model,
            weight: tier.weight,
            state: health?.state ?? 'healthy',
            attempts: health?.attempts ?? 0,
            failures: health?.failures ?? 0,
            last_outcome: health?.lastOutcome ?? null,
          };
        }),
      };
    }
    return routes;
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    if (event.type !== 'attempt_end' || event.blame === 'payload') return;
    const k = key(event.route, event.tier);
    let health = this.tiers.get(k);
    if (!health) {
      health = { state: 'healthy', attempts: 0, failures: 0, consecutiveFailures: 0, lastOutcome: null, lastError: null };
      this.tiers.set(k, health);
    }
    const outcome = event.record.outcome;
    health.attempts++;
    health.lastOutcome = outcome;
    if (outcome === 'ok') {
      health.consecutiveFailures = 0;
      health.state = 'healthy';
    } else {
      health.failures++;
      health.consecutiveFailures++;
      health.lastError = event.record.message ?? outcome;
      health.state = 'degraded';
    }
  };
}

function key(route: string, tier: string): string {
  return `${route}\u0000${tier}`;
}
