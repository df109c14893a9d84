import type { Writable } from 'node:stream';
import type { TelemetryBus } from './bus.js';
import type { RequestFinished, TelemetryEvent } from './events.js';

/**
 * The JSON-lines request log: one line per finished request with the route, the tier that
 * answered, every attempt with its outcome, TTFT, duration and status. Secrets never reach
 * it: attempts carry reasons and upstream messages, never request headers.
 */
export function attachRequestLog(bus: TelemetryBus, out: Writable): () => void {
  const batch = new LineBatch(out);
  // A dropped control is said once per tier and reason, not on every request that carries it.
  const dropsSaid = new Set<string>();
  const unsubscribe = bus.subscribe((event: TelemetryEvent) => {
    if (event.type === 'control_dropped') {
      const key = `${event.route}\0${event.tier}\0${event.message}`;
      if (dropsSaid.has(key)) return;
      dropsSaid.add(key);
    }
    const line = event.type === 'request_end' ? toLogLine(event, '') : toControlLine(event, '');
    if (!line) return;
    line.time = batch.time(); // `time` stays the first key: it was set (empty) first
    batch.add(JSON.stringify(line));
  });
  return () => {
    unsubscribe();
    batch.flush();
  };
}

/**
 * Lines written in one event-loop turn go out as one write: under load a write (a syscall)
 * per request costs more than the rest of the log. They share one timestamp, taken once.
 */
class LineBatch {
  private pending = '';
  private stamp: string | null = null;

  constructor(private readonly out: Writable) {}

  time(): string {
    return (this.stamp ??= new Date().toISOString());
  }

  add(line: string): void {
    if (this.pending === '') setImmediate(this.flush);
    this.pending += `${line}\n`;
  }

  readonly flush = (): void => {
    const text = this.pending;
    this.pending = '';
    this.stamp = null;
    if (text !== '') this.out.write(text);
  };
}

/** Control-plane events worth a line: state changes, weights, rollbacks, reloads, failed checks, provider output, the usage log's and the shared state's health. */
function toControlLine(event: TelemetryEvent, time: string): Record<string, unknown> | null {
  switch (event.type) {
    case 'tier_state':
    case 'weight':
    case 'rollback':
    case 'reload':
    case 'provider_output':
    case 'usage_degraded':
    case 'usage_recovered':
    case 'state_degraded':
    case 'state_recovered':
    case 'control_dropped':
    case 'fit_discovered': {
      const { type, ...fields } = event;
      return { time, event: type, ...fields };
    }
    case 'health_check': {
      if (event.ok && event.kind !== 'warmup') return null; // a passing periodic check is noise
      const { type, ...fields } = event;
      return { time, event: type, ...fields };
    }
    default:
      return null;
  }
}

export function toLogLine(event: RequestFinished, time = new Date().toISOString()): Record<string, unknown> {
  const line: Record<string, unknown> = {
    time,
    event: 'request',
    id: event.id,
    route: event.route || null,
    protocol: event.protocol,
    tier: event.tier,
    status: event.status,
    outcome: event.outcome,
    stream: event.stream,
    attempts: event.attempts,
    ttft_ms: event.ttftMs === undefined ? null : Math.round(event.ttftMs),
    duration_ms: Math.round(event.durationMs),
  };
  if (event.usage) line.usage = event.usage;
  if (event.savers) {
    // What the savers measured, beside what the upstream billed: how far the estimate is from the bill.
    line.savers = event.savers.map(({ saver, before, after, failed }) => (failed ? { saver, before, after, failed } : { saver, before, after }));
    if (event.usage) line.prompt_tokens_upstream = event.usage.prompt_tokens;
  }
  if (event.chunkErrors > 0) line.chunk_errors = event.chunkErrors;
  if (event.promptTruncated) line.prompt_truncated = event.promptTruncated;
  if (event.error) line.error = event.error;
  if (event.resumed) line.resumed = event.resumed;
  return line;
}
