import type { Counter, Registry } from 'prom-client';
import * as prom from '../telemetry/prom.js';

/** The export's own metrics, on the server's registry once traces are first turned on (kept across a reload that turns them off). */
export interface TraceCounters {
  exported: Counter;
  dropped: Counter<'reason'>;
}

export function traceCounters(registry: Registry): TraceCounters {
  const exported =
    (registry.getSingleMetric('llm_trace_spans_exported_total') as Counter | undefined) ??
    new prom.Counter({ name: 'llm_trace_spans_exported_total', help: 'Spans the OTLP collector accepted.', registers: [registry] });
  const dropped =
    (registry.getSingleMetric('llm_trace_spans_dropped_total') as Counter<'reason'> | undefined) ??
    new prom.Counter({
      name: 'llm_trace_spans_dropped_total',
      help: 'Spans not exported, by why: queue_full (the oldest of a full queue), export_failed (the collector unreachable or refusing the batch), rejected (refused in a partial success), shutdown.',
      labelNames: ['reason'],
      registers: [registry],
    });
  return { exported, dropped };
}
