import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import type { AttemptFinished, AttemptRecord, RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';
import { RequestSpans } from '../../../src/tracing/request-spans.js';
import { hrTime } from '../../../src/tracing/span-record.js';

const config = loadConfigText(
  `version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:8080/v1" }
  cloud: { type: openai, base_url: "https://api.example.com/v1" }
routes:
  chat:
    tiers: [{ provider: local, model: small }, { provider: cloud, model: big }]
`,
  '/t/llm-route.yaml',
  {},
);

const T0 = 1_700_000_000_000;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

/** Spans from the events, made at once (flush) rather than on the next turn. */
function spansOf(events: TelemetryEvent[]): ReadableSpan[] {
  const spans: ReadableSpan[] = [];
  const maker = new RequestSpans({ add: (span) => spans.push(span) }, {} as ReadableSpan['resource'], { name: 'llm-route' }, config);
  for (const event of events) maker.onEvent(event);
  maker.flush();
  return spans;
}

const started = (id = 'r1'): TelemetryEvent => ({ type: 'request_start', id, route: 'chat', stream: true, protocol: 'chat' });

function attemptEnd(record: AttemptRecord, fields: Partial<AttemptFinished>): AttemptFinished {
  return {
    type: 'attempt_end',
    id: 'r1',
    route: 'chat',
    tier: record.tier,
    provider: record.tier,
    record,
    stream: true,
    blame: null,
    model: '',
    startMs: 0,
    endMs: 0,
    ...fields,
  };
}

function ended(attempts: AttemptRecord[], fields: Partial<RequestFinished> = {}): RequestFinished {
  return {
    type: 'request_end',
    id: 'r1',
    route: 'chat',
    tier: 'cloud',
    status: 200,
    outcome: 'ok',
    stream: true,
    committed: true,
    attempts,
    durationMs: 1000,
    ttftMs: 300,
    startedAt: T0,
    protocol: 'chat',
    provider: 'cloud',
    model: 'big',
    chunkErrors: 0,
    http: { path: '/v1/chat/completions?key=secret', traceparent: undefined, tracestate: undefined },
    ...fields,
  };
}

/** A failover: local refused at once, cloud streamed its first token at 300 ms and ran to the end. */
function failover(fields: Partial<RequestFinished> = {}): TelemetryEvent[] {
  const refused: AttemptRecord = { tier: 'local', attempt: 1, outcome: 'connection_refused', ms: 5 };
  const ok: AttemptRecord = { tier: 'cloud', attempt: 1, outcome: 'ok', ms: 250 };
  return [
    started(),
    attemptEnd(refused, { model: 'small', startMs: 10, endMs: 15, blame: 'provider' }),
    attemptEnd(ok, { model: 'big', provider: 'cloud', startMs: 20, endMs: 300 }),
    ended([refused, ok], fields),
  ];
}

describe('RequestSpans', () => {
  it('makes a SERVER span for the request and a CLIENT span per attempt, children of it in one trace', () => {
    const [server, refused, ok] = spansOf(failover());
    expect(server.name).toBe('POST /v1/chat/completions'); // the query (it may carry anything) is cut
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.parentSpanContext).toBeUndefined();
    expect(server.startTime).toEqual(hrTime(T0));
    expect(server.endTime).toEqual(hrTime(T0 + 1000));
    expect(server.attributes).toMatchObject({
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'llm_route.route': 'chat',
      'llm_route.tier': 'cloud',
      'llm_route.ttft_ms': 300,
    });
    expect(server.events.map((e) => [e.name, e.time])).toEqual([['llm_route.first_content', hrTime(T0 + 300)]]);
    expect(server.status.code).toBe(SpanStatusCode.UNSET);

    expect([refused.name, ok.name]).toEqual(['chat small', 'chat big']);
    for (const span of [refused, ok]) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.spanContext().traceId).toBe(server.spanContext().traceId);
      expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
    }
    expect(refused.status.code).toBe(SpanStatusCode.ERROR);
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    expect([refused.startTime, refused.endTime]).toEqual([hrTime(T0 + 10), hrTime(T0 + 15)]);
    // The committed stream began at its own start and ran until the request ended.
    expect([ok.startTime, ok.endTime]).toEqual([hrTime(T0 + 20), hrTime(T0 + 1000)]);
    expect(new Set([server, refused, ok].map((s) => s.spanContext().spanId)).size).toBe(3);
  });

  it("joins the client's trace when it sent a sampled traceparent, and records nothing when it asked not to", () => {
    const [server, attempt] = spansOf(failover({ http: { path: '/v1/chat/completions', traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: undefined } }));
    expect(server.spanContext().traceId).toBe(TRACE);
    expect(server.parentSpanContext?.spanId).toBe(SPAN);
    expect(attempt.spanContext().traceId).toBe(TRACE);

    expect(spansOf(failover({ http: { path: '/v1/chat/completions', traceparent: `00-${TRACE}-${SPAN}-00`, tracestate: undefined } }))).toEqual([]);
    // An invalid one is ignored: the request starts a trace of its own.
    const [own] = spansOf(failover({ http: { path: '/v1/chat/completions', traceparent: `00-${'0'.repeat(32)}-${SPAN}-01`, tracestate: undefined } }));
    expect(own.spanContext().traceId).not.toBe('0'.repeat(32));
    expect(own.parentSpanContext).toBeUndefined();
  });

  it('marks a server error as an error, and an attempt whose event was not seen as an instant at the end', () => {
    const record: AttemptRecord = { tier: 'local', attempt: 1, outcome: 'server_error', ms: 40, status: 503 };
    const spans = spansOf([started(), ended([record], { status: 502, outcome: 'failed', tier: null, ttftMs: undefined, committed: false, durationMs: 400 })]);
    expect(spans).toHaveLength(2);
    const [server, attempt] = spans;
    expect(server.status.code).toBe(SpanStatusCode.ERROR);
    expect(server.attributes['error.type']).toBe('failed');
    expect(server.attributes).not.toHaveProperty('llm_route.tier');
    expect(server.events).toEqual([]);
    expect(attempt.name).toBe('chat'); // no event, no model name
    expect([attempt.startTime, attempt.endTime]).toEqual([hrTime(T0 + 400), hrTime(T0 + 400)]);
  });

  it("ignores an attempt of a request it never saw start, and spans an embeddings request's attempt as embeddings", () => {
    const record: AttemptRecord = { tier: 'local', attempt: 1, outcome: 'ok', ms: 30 };
    const spans = spansOf([
      attemptEnd(record, { model: 'small', startMs: 1, endMs: 31, stream: false }),
      ended([record], { stream: false, committed: false, tier: 'local', ttftMs: undefined, embeddings: { inputs: 3 } }),
    ]);
    expect(spans.map((s) => s.name)).toEqual(['POST /v1/chat/completions', 'embeddings']);
  });
});
