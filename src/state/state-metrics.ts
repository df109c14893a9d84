import type { Counter, Registry } from 'prom-client';
import * as prom from '../telemetry/prom.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { isLimitSkip, type TelemetryEvent } from '../telemetry/events.js';

/**
 * docs/operations.md of the state seam: `llm_rate_limited_total{provider}` (tiers skipped by
 * llm-route's own limits), `llm_idempotent_replays_total` (answers replayed under an
 * Idempotency-Key) and `llm_state_backend_up` (1 while the shared state is reachable; always 1
 * embedded), read from the backend at each scrape. Returns what unsubscribes.
 */
export function attachStateMetrics(registry: Registry, bus: TelemetryBus, isUp: () => boolean): () => void {
  const limited = new prom.Counter({
    name: 'llm_rate_limited_total',
    help: 'Tiers skipped because their provider was at its limits (rpm, tpm, concurrency) after queue_ms.',
    labelNames: ['provider'],
    registers: [registry],
  });
  const replays = new prom.Counter({
    name: 'llm_idempotent_replays_total',
    help: 'Answers replayed from an Idempotency-Key record (completed, or joined while running).',
    registers: [registry],
  });
  new prom.Gauge({
    name: 'llm_state_backend_up',
    help: 'The shared state (Redis) is reachable: 1, or 0 while serving on local state. Always 1 embedded.',
    registers: [registry],
    collect() {
      this.set(isUp() ? 1 : 0);
    },
  });
  const children = new Map<string, Counter.Internal>();
  return bus.subscribe((event: TelemetryEvent) => {
    if (event.type === 'attempt_end') {
      if (event.record.outcome !== 'rate_limited' || !isLimitSkip(event.record)) return;
      let child = children.get(event.provider);
      if (!child) children.set(event.provider, (child = limited.labels(event.provider)));
      child.inc();
    } else if (event.type === 'request_end' && event.outcome === 'replayed') replays.inc();
  });
}
