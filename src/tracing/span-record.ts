import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
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
  readonly duration: HrTime;
  readonly events: TimedEvent[] = [];

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
    const end = Math.max(startMs, endMs);
    this.startTime = hrTime(startMs);
    this.endTime = hrTime(end);
    this.duration = hrTime(end - startMs);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  /** An event at `atMs` (epoch milliseconds). */
  addEvent(name: string, atMs: number, attributes?: Attributes): void {
    this.events.push({ name, time: hrTime(atMs), attributes, droppedAttributesCount: 0 });
  }
}

const NO_LINKS: Link[] = [];

/** Milliseconds (epoch, or a duration) as OpenTelemetry's [seconds, nanoseconds]. */
export function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.round((ms - seconds * 1000) * 1e6));
  return [seconds, nanos];
}
