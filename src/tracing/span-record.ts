import { type Attributes, type HrTime, type Link, type SpanContext, type SpanKind, type SpanStatus, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace';

/**
 * A finished span as the OTLP serializers read it (the SDK's ReadableSpan), made from a
 * request's events after the fact, with the times they carry: no SDK tracer runs on the
 * request path, and a span exists only once its request has ended.
 */
export class SpanRecord implements ReadableSpan {
  readonly links: Link[] = NO_LINKS;
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  /** No events (shared) until one is added. */
  events: TimedEvent[] = NO_EVENTS;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    /** Epoch milliseconds, fractions included. */
    startMs: number,
    endMs: number,
    readonly attributes: Attributes,
    readonly status: SpanStatus,
    readonly resource: ReadableSpan['resource'],
    readonly instrumentationScope: ReadableSpan['instrumentationScope'],
  ) {
    this.startTime = hrTime(startMs);
    this.endTime = hrTime(Math.max(startMs, endMs));
  }

  /** Not encoded in OTLP (its start and end are): made only if asked. */
  get duration(): HrTime {
    const [s, ns] = this.startTime;
    const [es, ens] = this.endTime;
    return ens >= ns ? [es - s, ens - ns] : [es - s - 1, ens - ns + 1e9];
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** An event at `atMs` (epoch milliseconds). */
  addEvent(name: string, atMs: number, attributes?: Attributes): void {
    if (this.events === NO_EVENTS) this.events = [];
    this.events.push({ name, time: hrTime(atMs), attributes, droppedAttributesCount: 0 });
  }
}

const NO_LINKS: Link[] = [];
const NO_EVENTS: TimedEvent[] = [];

/** A span's status: only the code (its message could quote an upstream's words). */
export const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
export const ERROR: SpanStatus = Object.freeze({ code: SpanStatusCode.ERROR });

/** Milliseconds (epoch, or a duration) as OpenTelemetry's [seconds, nanoseconds]. */
export function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6));
  return [seconds, nanos];
}
