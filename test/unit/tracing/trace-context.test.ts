import { describe, expect, it } from 'vitest';
import { clientContext, isSampled, SpanIds } from '../../../src/tracing/trace-context.js';

describe('W3C trace context from a client', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const SPAN = '00f067aa0ba902b7';

  it('reads a valid traceparent, its sampled flag, and a tracestate beside it', () => {
    const context = clientContext(`00-${TRACE}-${SPAN}-01`, 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(context).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(context?.traceState?.serialize()).toBe('congo=t61rcWkgMzE,rojo=00f067aa0ba902b7');
    expect(isSampled(context as NonNullable<typeof context>)).toBe(true);
    expect(isSampled(clientContext(`00-${TRACE}-${SPAN}-00`) as NonNullable<typeof context>)).toBe(false);
    // A later version may carry more fields; its first four are read.
    expect(clientContext(`01-${TRACE}-${SPAN}-01-what-comes-next`, undefined)).toMatchObject({ traceId: TRACE });
  });

  it('ignores an invalid one: zero ids, upper case, version ff, extra fields in version 00, wrong lengths; and a bad tracestate', () => {
    for (const header of [
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      '',
      'x'.repeat(600),
    ]) {
      expect(clientContext(header, undefined), header).toBeNull();
    }
    expect(clientContext(undefined, 'a=b')).toBeNull();
    expect(clientContext(`00-${TRACE}-${SPAN}-01`, 'not a valid=state===')?.traceState).toBeUndefined();
  });

  it('makes ids of the right length, hex, never all zeros, all different', () => {
    const ids = new SpanIds();
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const trace = ids.traceId();
      const span = ids.spanId();
      expect(trace).toMatch(/^[0-9a-f]{32}$/);
      expect(span).toMatch(/^[0-9a-f]{16}$/);
      seen.add(trace).add(span);
    }
    expect(seen.size).toBe(4000);
  });
});
