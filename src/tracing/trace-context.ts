import { createTraceState, isSpanContextValid, type SpanContext, TraceFlags } from '@opentelemetry/api';
import { randomFillSync } from 'node:crypto';

/**
 * W3C Trace Context as llm-route reads it from a client (`traceparent`, `tracestate`), and the
 * ids of the spans it makes. https://www.w3.org/TR/trace-context/#traceparent-header
 */

// version-traceid-parentid-flags; a future version may append fields after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The client's span as the parent of the request's, or null when its `traceparent` is absent or
 * not valid (an invalid one is ignored, as the specification says: the request starts a trace).
 * A `tracestate` is kept only beside a valid `traceparent`; one that does not parse is dropped.
 */
export function clientContext(traceparent: string | undefined, tracestate?: string): SpanContext | null {
  if (traceparent === undefined || traceparent.length > 512) return null;
  const match = TRACEPARENT.exec(traceparent.trim());
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match;
  // Version ff is forbidden; version 00 has exactly four fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  const context: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
  if (!isSpanContextValid(context)) return null; // all-zero ids
  if (tracestate !== undefined && tracestate.length <= 512) {
    const state = createTraceState(tracestate);
    if (state.serialize() !== '') context.traceState = state;
  }
  return context;
}

/** Whether a client's context asks for its trace to be recorded (the sampled flag). */
export function isSampled(context: SpanContext): boolean {
  return (context.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED;
}

/**
 * Random trace and span ids from a pool of random bytes, refilled from the system's CSPRNG
 * (one call a few hundred spans, not one a span). Never all zeros: that id is invalid.
 */
export class SpanIds {
  private readonly pool = Buffer.allocUnsafe(4096);
  private at = this.pool.length;

  traceId(): string {
    return this.hex(16);
  }

  spanId(): string {
    return this.hex(8);
  }

  private hex(bytes: number): string {
    for (;;) {
      if (this.at + bytes > this.pool.length) {
        randomFillSync(this.pool);
        this.at = 0;
      }
      const from = this.at;
      this.at += bytes;
      for (let i = from; i < this.at; i++) if (this.pool[i] !== 0) return this.pool.toString('hex', from, this.at);
    }
  }
}
