import { readFileSync } from 'node:fs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Registry } from 'prom-client';
import type { Config } from '../config/schema.js';
import { sameExport, type TraceExport } from '../config/trace-export.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { OtlpExporter } from './otlp-exporter.js';
import { RequestSpans } from './request-spans.js';
import { traceCounters } from './trace-metrics.js';

/**
 * Traces, running (README "Traces"): a subscriber of the telemetry bus that makes each ended
 * request's spans (request-spans.ts) and an OTLP/HTTP exporter that sends them in batches
 * (otlp-exporter.ts). Loaded by the server only when traces are on (src/server/trace-link.ts).
 */
export interface Tracing {
  /** A reloaded config: its providers, and where spans go now. */
  configure(config: Config, target: TraceExport): void;
  /** Stops making spans and sends the ones queued, within `ms`. */
  close(ms: number): Promise<void>;
}

export function startTracing(bus: TelemetryBus, registry: Registry, config: Config, target: TraceExport): Tracing {
  const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  // What the OTLP serializers read of a resource: its attributes (@opentelemetry/resources, whose
  // detectors and semantic conventions would triple the size of what traces load, is not needed for them).
  const resource = { attributes: { ...target.resource, 'service.version': version } } as unknown as ReadableSpan['resource'];
  const exporter = new OtlpExporter(target, bus, traceCounters(registry));
  const spans = new RequestSpans(exporter, resource, { name: 'llm-route', version }, config);
  const unsubscribe = bus.subscribe(spans.onEvent);
  let current = target;
  return {
    configure(next, nextTarget) {
      spans.configure(next);
      if (sameExport(current, nextTarget)) return;
      exporter.retarget(nextTarget);
      current = nextTarget;
    },
    async close(ms) {
      unsubscribe();
      spans.flush();
      await exporter.close(ms);
    },
  };
}
