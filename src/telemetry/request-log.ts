import type { Writable } from 'node:stream';
import type { TelemetryBus } from './bus.js';
import type { RequestFinished, TelemetryEvent } from './events.js';

/**
 * The JSON-lines request log: one line per finished request with the route, the tier that
 * answered, every attempt with its outcome, TTFT, duration and status. Secrets never reach
 * it: attempts carry reasons and upstream messages, never request headers.
 */
export function attachRequestLog(bus: TelemetryBus, out: Writable): () => void {
  return bus.subscribe((event: TelemetryEvent) => {
    const line = event.type === 'request_end' ? toLogLine(event) : toControlLine(event);
    if (line) out.write(`${JSON.stringify(line)}\n`);
  });
}

/** Control-plane events worth a line: state changes, weights, rollbacks, reloads, failed checks, provider output. */
function toControlLine(event: TelemetryEvent): Record<string, unknown> | null {
  switch (event.type) {
    case 'tier_state':
    case 'weight':
    case 'rollback':
    case 'reload':
    case 'provider_output': {
      const { type, ...fields } = event;
      return { time: new Date().toISOString(), event: type, ...fields };
    }
    case 'health_check': {
      if (event.ok && event.kind !== 'warmup') return null; // a passing periodic check is noise
      const { type, ...fields } = event;
      return { time: new Date().toISOString(), event: type, ...fields };
    }
    default:
      return null;
  }
}

export function toLogLine(event: RequestFinished): Record<string, unknown> {
  const line: Record<string, unknown> = {
    time: new Date().toISOString(),
    event: 'request',
    id: event.id,
    route: event.route || null,
    tier: event.tier,
    status: event.status,
    outcome: event.outcome,
    stream: event.stream,
    attempts: event.attempts,
    ttft_ms: event.ttftMs === undefined ? null : Math.round(event.ttftMs),
    duration_ms: Math.round(event.durationMs),
  };
  if (event.usage) line.usage = event.usage;
  if (event.chunkErrors > 0) line.chunk_errors = event.chunkErrors;
  if (event.error) line.error = event.error;
  return line;
}
