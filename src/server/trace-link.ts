import type { Registry } from 'prom-client';
import type { Env } from '../config/env.js';
import type { Config } from '../config/schema.js';
import { shownEndpoint, traceExport } from '../config/trace-export.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { Tracing } from '../tracing/tracing.js';

/** How long a stopping server gives its last spans to reach the collector. */
const FLUSH_MS = 2_000;

/**
 * Traces in the server's lifecycle (README "Traces"): on when the tier file's `telemetry.otlp`
 * or the OTEL_* environment says so, and only then is src/tracing/ loaded (a dynamic import: a
 * server without traces never loads its modules or the OpenTelemetry packages). A reload turns
 * them on, off, or to another collector; a stopping server flushes them. Changes run one after
 * another, in the order asked.
 */
export class TraceLink {
  private tracing: Promise<Tracing | null> = Promise.resolve(null);
  /** The configuration problem said last (each is said once). */
  private problem: string | null = null;

  constructor(
    private readonly bus: TelemetryBus,
    private readonly registry: Registry,
    private readonly env: Env,
  ) {}

  /** Applies a config's traces (at start and on each reload). */
  apply(config: Config): void {
    const target = traceExport(config, this.env);
    const problem = target && 'problem' in target ? target : null;
    if (problem && problem.problem !== this.problem) this.bus.emit({ type: 'trace_export_failing', endpoint: problem.endpoint, error: problem.problem });
    this.problem = problem?.problem ?? null;
    const next = target && !('problem' in target) ? target : null;
    this.tracing = this.tracing.then(async (current) => {
      if (!next) {
        await current?.close(FLUSH_MS);
        return null;
      }
      if (current) {
        current.configure(config, next);
        return current;
      }
      const { startTracing } = await import('../tracing/tracing.js');
      return startTracing(this.bus, this.registry, config, next);
    });
    this.tracing = this.tracing.catch((err: unknown) => {
      this.bus.emit({
        type: 'trace_export_failing',
        endpoint: next ? shownEndpoint(next.url) : '',
        error: `traces could not start: ${(err as Error).message}`,
      });
      return null;
    });
  }

  /** Settles once the latest change is in force (the server listens only then: its first requests are traced). */
  async ready(): Promise<void> {
    await this.tracing;
  }

  /** Sends the spans still queued (within a bound) and stops. */
  async close(): Promise<void> {
    const tracing = await this.tracing;
    this.tracing = Promise.resolve(null);
    await tracing?.close(FLUSH_MS);
  }
}
