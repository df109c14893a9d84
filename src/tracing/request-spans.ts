import { type Attributes, type SpanContext, SpanKind, TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Config } from '../config/schema.js';
import type { AttemptFinished, AttemptRecord, RequestFinished, TelemetryEvent } from '../telemetry/events.js';
import { attemptAttributes, attemptRoles, operationName } from './attempt-attributes.js';
import { type ProviderFacts, providerFactsOf } from './provider-facts.js';
import { ERROR, SpanRecord, UNSET } from './span-record.js';
import { clientContext, isSampled, SpanIds } from './trace-context.js';

/** Attempts of requests in flight whose events are kept (each request has a few). */
const MAX_OPEN_ATTEMPTS = 10_000;

/** Where finished spans go (the exporter's queue). */
export interface SpanSink {
  add(span: ReadableSpan): void;
}

/**
 * The request's spans, made from its telemetry events once it has ended (src/telemetry/: the
 * request path publishes events and calls nothing of this): a SERVER span for the request,
 * the child of the client's own span when it sent a valid `traceparent`, and a CLIENT span
 * named `chat {model}` (`embeddings {model}` for an embeddings request) for each upstream
 * attempt in its record, skipped, failed, hedged and resumed ones included. Times are the
 * events' own: the request's arrival and duration, each
 * attempt's start and end (a stream that committed runs until the request ends, or until the
 * resume that took it over starts). No prompt or answer text, header or credential is read.
 */
export class RequestSpans {
  private readonly ids = new SpanIds();
  /**
   * Each attempt's own event by its record (the same object the request's end lists), until that
   * end; only of the requests that started (a token count's attempts have no request_end).
   * Bounded all the same: past MAX_OPEN_ATTEMPTS the oldest is forgotten.
   */
  private readonly attempts = new Map<AttemptRecord, AttemptFinished>();
  /** The requests started and not ended (ids the client may choose: a repeated one only loses timings). */
  private readonly open = new Set<string>();
  /**
   * Requests ended and not yet made into spans. Their spans are made together on the event loop's
   * next turn, not one request at a time between the requests' own work: a loop over many keeps
   * the code and data it touches warm, which costs a third of making each alone.
   */
  private pending: Array<{ end: RequestFinished; events: (AttemptFinished | undefined)[]; parent: SpanContext | null }> = [];
  private making: NodeJS.Immediate | null = null;
  private providers: Map<string, ProviderFacts>;

  constructor(
    private readonly sink: SpanSink,
    private readonly resource: ReadableSpan['resource'],
    private readonly scope: ReadableSpan['instrumentationScope'],
    config: Config,
  ) {
    this.providers = providerFactsOf(config);
  }

  /** A reloaded config: its providers' addresses. */
  configure(config: Config): void {
    this.providers = providerFactsOf(config);
  }

  readonly onEvent = (event: TelemetryEvent): void => {
    if (event.type === 'request_start') {
      if (this.open.size >= MAX_OPEN_ATTEMPTS) this.open.delete(this.open.values().next().value as string);
      this.open.add(event.id);
    } else if (event.type === 'attempt_end') {
      if (!this.open.has(event.id)) return;
      if (this.attempts.size >= MAX_OPEN_ATTEMPTS) this.attempts.delete(this.attempts.keys().next().value as AttemptRecord);
      this.attempts.set(event.record, event);
    } else if (event.type === 'request_end') {
      this.open.delete(event.id);
      this.record(event);
    }
  };

  /** Makes the spans of the requests that have ended (at once: a stopping server's last ones). */
  readonly flush = (): void => {
    if (this.making) clearImmediate(this.making);
    this.making = null;
    const pending = this.pending;
    this.pending = [];
    for (const { end, events, parent } of pending) this.spansOf(end, events, parent);
  };

  private record(end: RequestFinished): void {
    const events = end.attempts.map((record) => {
      const event = this.attempts.get(record);
      if (event) this.attempts.delete(record);
      return event;
    });
    const parent = clientContext(end.http?.traceparent, end.http?.tracestate);
    // The client's trace is not recorded: neither is this part of it (parent-based sampling).
    if (parent && !isSampled(parent)) return;
    this.pending.push({ end, events, parent });
    this.making ??= setImmediate(this.flush);
  }

  private spansOf(end: RequestFinished, events: (AttemptFinished | undefined)[], parent: SpanContext | null): void {
    const traceId = parent?.traceId ?? this.ids.traceId();
    const context: SpanContext = { traceId, spanId: this.ids.spanId(), traceFlags: TraceFlags.SAMPLED, traceState: parent?.traceState };
    const startMs = end.startedAt;
    const endMs = startMs + end.durationMs;
    const server = new SpanRecord(
      `POST ${pathOf(end.http?.path)}`,
      SpanKind.SERVER,
      context,
      parent ?? undefined,
      startMs,
      endMs,
      serverAttributes(end),
      end.status >= 500 ? ERROR : UNSET,
      this.resource,
      this.scope,
    );
    if (end.ttftMs !== undefined) server.addEvent('llm_route.first_content', startMs + end.ttftMs);
    this.sink.add(server);
    const roles = attemptRoles(end, events);
    const windows = attemptWindows(end, events);
    for (let i = 0; i < end.attempts.length; i++) {
      const record = end.attempts[i];
      const event = events[i];
      const [from, to] = windows[i];
      const model = event?.model ?? '';
      const attributes = attemptAttributes(end, record, event, roles[i], event ? this.providers.get(event.provider) : undefined);
      const operation = operationName(end);
      const span = new SpanRecord(
        model ? `${operation} ${model}` : operation,
        SpanKind.CLIENT,
        { traceId, spanId: this.ids.spanId(), traceFlags: TraceFlags.SAMPLED, traceState: parent?.traceState },
        context,
        startMs + from,
        startMs + to,
        attributes,
        record.outcome === 'ok' ? UNSET : ERROR,
        this.resource,
        this.scope,
      );
      this.sink.add(span);
    }
  }
}

/**
 * Each attempt's start and end in milliseconds from the request's arrival, from its event (it
 * says when the attempt was recorded and how long it had run). The stream that committed first
 * did so at the request's TTFT (its record may come a moment later, after a hedge's race); a
 * stream that committed ran until the request ended, unless a resume took it over: then until
 * that one started. An attempt whose event was not seen (one the route's deadline stopped
 * before it started, or traces turned on meanwhile) is an instant at the request's end.
 */
function attemptWindows(end: RequestFinished, events: readonly (AttemptFinished | undefined)[]): Array<[number, number]> {
  const windows = events.map((event): [number, number] => (event ? [event.startMs, event.endMs] : [end.durationMs, end.durationMs]));
  if (!end.committed) return windows;
  const firstOk = events.findIndex((event) => event?.record.outcome === 'ok');
  if (firstOk !== -1 && end.ttftMs !== undefined) {
    const [start, recorded] = windows[firstOk];
    windows[firstOk] = [end.ttftMs - (recorded - start), end.ttftMs];
  }
  for (let i = 0; i < events.length; i++) {
    if (events[i]?.record.outcome !== 'ok') continue;
    const committedAt = windows[i][1];
    const takeover = windows.findIndex(([start], at) => at > i && events[at] !== undefined && start >= committedAt);
    windows[i] = [windows[i][0], takeover === -1 ? end.durationMs : windows[takeover][0]];
  }
  return windows;
}

/** The SERVER span's attributes: HTTP's semantic conventions and llm-route's own (`llm_route.*`). */
function serverAttributes(end: RequestFinished): Attributes {
  const attributes: Attributes = {
    'http.request.method': 'POST',
    'url.path': pathOf(end.http?.path),
    'http.response.status_code': end.status,
    'llm_route.request_id': end.id,
    'llm_route.protocol': end.protocol,
    'llm_route.outcome': end.outcome,
  };
  if (end.route) attributes['llm_route.route'] = end.route;
  if (end.rule !== undefined) attributes['llm_route.rule'] = end.rule;
  if (end.tier) attributes['llm_route.tier'] = end.tier;
  if (end.affinity) attributes['llm_route.affinity'] = true;
  if (end.ttftMs !== undefined) attributes['llm_route.ttft_ms'] = Math.round(end.ttftMs);
  if (end.status >= 500) attributes['error.type'] = end.outcome;
  return attributes;
}

/** The request's path without its query string (which may carry anything). */
function pathOf(path: string | undefined): string {
  if (!path) return '/';
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}
