import { toolTextSummary } from '../protocols/tool-text/scope.js';
import type { Writable } from 'node:stream';
import { SaidOnce } from '../util/said-once.js';
import type { TelemetryBus } from './bus.js';
import type { RequestFinished, TelemetryEvent } from './events.js';

/**
 * The JSON-lines request log: one line per finished request with the route, the tier that
 * answered, every attempt with its outcome, TTFT, duration and status. Secrets never reach
 * it: attempts carry reasons and upstream messages, never request headers.
 */
export function attachRequestLog(bus: TelemetryBus, out: Writable): () => void {
  const batch = new LineBatch(out);
  // A dropped control is said once per tier and reason, not on every request that carries it;
  // so is a model name that reached a route only through its `*` alias (a typo answered 200),
  // and a path no endpoint serves, per method and path.
  const dropsSaid = new SaidOnce();
  const catchAllSaid = new SaidOnce();
  const unknownSaid = new SaidOnce();
  const unsubscribe = bus.subscribe((event: TelemetryEvent) => {
    if (event.type === 'request_start') return batch.started();
    if (event.type === 'request_end') batch.ended();
    if (event.type === 'control_dropped' && !dropsSaid.first(`${event.route}\0${event.tier}\0${event.message}`)) return;
    if (event.type === 'catch_all_alias' && !catchAllSaid.first(`${event.route}\0${event.model}`)) return;
    if (event.type === 'unknown_endpoint' && !unknownSaid.first(`${event.method} ${event.path}`)) return;
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
 * Lines share writes: stdout to a pipe is synchronous in Node on Linux, so under load a write
 * (a syscall) per request cost more than the rest of the log, and one per event-loop turn was
 * still about one per request at c10. A line goes out on the next turn when no other request is
 * open (a quiet server, or the last of a burst: what a client reads after its answer is there);
 * while others are open it waits for theirs, at most FLUSH_AFTER_MS. One timer per batch.
 */
class LineBatch {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private stampMs = -1;
  private stamp = '';
  /** Requests started and not yet ended, as the events tell (a request rejected before routing only ends). */
  private open = 0;

  constructor(private readonly out: Writable) {}

  started(): void {
    this.open++;
  }

  ended(): void {
    if (this.open > 0) this.open--;
  }

  /** The current time as ISO text, formatted once per millisecond. */
  time(): string {
    const now = Date.now();
    if (now !== this.stampMs) {
      this.stampMs = now;
      this.stamp = new Date(now).toISOString();
    }
    return this.stamp;
  }

  add(line: string): void {
    this.pending += `${line}\n`;
    if (this.pending.length >= MAX_BATCH_CHARS) this.flush();
    else if (this.open === 0) this.immediate ??= setImmediate(this.flush);
    else this.timer ??= setTimeout(this.flush, FLUSH_AFTER_MS);
  }

  readonly flush = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.out.write(text);
  };
}

/** How long a line may wait for the lines of other open requests. */
const FLUSH_AFTER_MS = 2;
const MAX_BATCH_CHARS = 64 * 1024;

/** Control-plane events worth a line (and a model load: no request, a line of its own): state changes, weights, rollbacks, reloads, failed checks, provider output, the usage log's, the shared state's and the trace export's health. */
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
    case 'trace_export_failing':
    case 'trace_export_recovered':
    case 'control_dropped':
    case 'prompt_truncated':
    case 'tier_unavailable':
    case 'fit_discovered': {
      const { type, ...fields } = event;
      return { time, event: type, ...fields };
    }
    case 'model_load': {
      const { type, durationMs, answeredBy, ...fields } = event;
      return { time, event: type, ...fields, answered_by: answeredBy, duration_ms: Math.round(durationMs) };
    }
    case 'catch_all_alias':
      return {
        time,
        event: event.type,
        route: event.route,
        model: event.model,
        message: `model "${event.model}" names no route; route "${event.route}" took it only through its catch-all alias "*" (said once per name)`,
      };
    case 'unknown_endpoint':
      return {
        time,
        event: event.type,
        method: event.method,
        path: event.path,
        user_agent: event.userAgent ?? null,
        protocol: event.protocol,
        message: `${event.method} ${event.path} is no endpoint of llm-route: answered 404 (said once per method and path)`,
      };
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
  if (event.rule !== undefined) line.rule = event.rule;
  if (event.embeddings) line.embeddings = event.embeddings;
  if (event.credential) line.credential = event.credential;
  if (event.affinity) line.affinity = true;
  if (event.usage) line.usage = event.usage;
  if (event.savers) {
    // What the savers measured, beside what the upstream billed: how far the estimate is from the bill.
    line.savers = event.savers.map(({ saver, before, after, failed }) => (failed ? { saver, before, after, failed } : { saver, before, after }));
    if (event.usage) line.prompt_tokens_upstream = event.usage.prompt_tokens;
  }
  if (event.chunkErrors > 0) line.chunk_errors = event.chunkErrors;
  if (event.promptTruncated) line.prompt_truncated = event.promptTruncated;
  if (event.toolText?.length) line.tool_text = toolTextSummary(event.toolText);
  if (event.error) line.error = event.error;
  if (event.resumed) line.resumed = event.resumed;
  if (event.hedged) line.hedged = { at_ms: event.hedged.at_ms, winner: event.hedged.winner, loser: event.hedged.loser };
  if (event.loserUsage) line.loser_usage = { tier: event.loserUsage.tier, ...event.loserUsage.usage };
  return line;
}
