import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { CLIENT, OtlpReceiver, type ReceivedSpan, SERVER } from '../../helpers/otlp-receiver.js';
import { chat, type ConfigSpec, DEAD_URL, sseText } from '../../helpers/proxy.js';

// docs/traces.md: a SERVER span per request and a CLIENT span per attempt, sent over OTLP/HTTP
// to a local receiver that decodes them with OpenTelemetry's own protobuf definitions (or as
// OTLP/JSON), as a collector would.

const h = useHarness();

async function receiver(): Promise<OtlpReceiver> {
  const r = await OtlpReceiver.start();
  h.defer(() => r.close());
  return r;
}

/** A proxy whose spans go to `to` (the standard variables), in batches every 20 ms. */
function tracedProxy(spec: ConfigSpec, to: OtlpReceiver, env: Record<string, string> = {}) {
  return h.proxy(spec, { traceEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: to.url, OTEL_BSP_SCHEDULE_DELAY: '20', ...env } });
}

/** The spans of one trace once its SERVER span and `clients` CLIENT spans have arrived. */
async function traceOf(r: OtlpReceiver, clients: number, traceId?: string): Promise<{ server: ReceivedSpan; attempts: ReceivedSpan[] }> {
  return waitFor(
    () => {
      const server = r.spans.find((s) => s.kind === SERVER && (traceId === undefined || s.traceId === traceId));
      if (!server) return null;
      const attempts = r.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === server.spanId);
      return attempts.length === clients ? { server, attempts: attempts.sort((a, b) => Number(a.start - b.start)) } : null;
    },
    5000,
    `a trace with ${clients} attempt spans`,
  );
}

describe.each(['http/protobuf', 'http/json'] as const)('traces over OTLP/HTTP (%s)', (protocol) => {
  it('a failover: the request span and two attempt spans, the first with error.type, with real times and valid ids', async () => {
    const r = await receiver();
    const cloud = await h.fake();
    cloud.always(healthyStream(['Hello', ' world']));
    const proxy = await tracedProxy(
      {
        tiers: [
          { name: 'local', url: DEAD_URL },
          { name: 'cloud', url: cloud.url },
        ],
      },
      r,
      { OTEL_EXPORTER_OTLP_PROTOCOL: protocol },
    );
    const before = BigInt(Date.now()) * 1_000_000n;
    const res = await chat(proxy, { stream: true, max_tokens: 64 });
    expect(sseText(await res.text())).toBe('Hello world');
    const after = BigInt(Date.now() + 1) * 1_000_000n;
    const { server, attempts } = await traceOf(r, 2);
    expect(r.errors).toEqual([]);
    expect(r.exports[0].path).toBe('/v1/traces');
    expect(r.exports[0].contentType).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');

    expect(server.name).toBe('POST /v1/chat/completions');
    expect(server.parentSpanId).toBe('');
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(server.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(server.traceId).not.toMatch(/^0+$/);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.response.status_code': 200,
      'llm_route.route': 'chat',
      'llm_route.outcome': 'ok',
      'llm_route.tier': 'cloud',
      'llm_route.protocol': 'chat',
    });
    expect(server.attributes['llm_route.ttft_ms']).toEqual(expect.any(Number));
    expect(server.events.map((e) => e.name)).toEqual(['llm_route.first_content']);
    expect(server.resource['service.name']).toBe('llm-route');
    expect(server.scope).toBe('llm-route');
    expect(server.status).toBe(0);

    const [local, answered] = attempts;
    for (const span of attempts) {
      expect(span.traceId).toBe(server.traceId);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.attributes['gen_ai.operation.name']).toBe('chat');
      expect(span.attributes['gen_ai.provider.name']).toBe('openai');
      expect(span.attributes['gen_ai.request.stream']).toBe(true);
      expect(span.attributes['gen_ai.request.max_tokens']).toBe(64);
      expect(span.attributes['server.address']).toBe('127.0.0.1');
    }
    expect(local.name).toBe('chat local-model');
    expect(local.attributes).toMatchObject({ 'error.type': 'connection_refused', 'llm_route.tier': 'local', 'llm_route.attempt': 1, 'server.port': 1 });
    expect(local.status).toBe(2);
    expect(answered.name).toBe('chat cloud-model');
    expect(answered.attributes).toMatchObject({
      'gen_ai.request.model': 'cloud-model',
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 2,
      'gen_ai.response.finish_reasons': ['stop'],
      'server.port': cloud.port,
      'llm_route.tier': 'cloud',
    });
    expect(answered.attributes['error.type']).toBeUndefined();
    expect(answered.status).toBe(0);
    // Real times: inside the test's own clock readings, each attempt inside the request, the failover before the answer.
    expect(server.start).toBeGreaterThanOrEqual(before);
    expect(server.end).toBeLessThanOrEqual(after);
    expect(local.start).toBeGreaterThanOrEqual(server.start);
    expect(local.end).toBeLessThanOrEqual(answered.start);
    expect(answered.end).toBeLessThanOrEqual(server.end + 1_000_000n); // ms-precise arrival: a ms of slack
    expect(server.events[0].time).toBeGreaterThan(answered.start);
    expect(server.events[0].time).toBeLessThan(answered.end);
  });
});

describe('traces of a whole answer', () => {
  it('a non-streaming answer: its attempt ends when the answer came, with the upstream usage', async () => {
    const r = await receiver();
    const up = await h.fake();
    up.always((ctx) => ctx.json(200, completion('hi', { prompt_tokens: 11, completion_tokens: 4 })));
    const proxy = await tracedProxy({ tiers: [{ name: 'local', url: up.url }] }, r);
    expect((await chat(proxy, {})).status).toBe(200);
    const { server, attempts } = await traceOf(r, 1);
    expect(attempts[0].attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 11, 'gen_ai.usage.output_tokens': 4, 'gen_ai.request.stream': false });
    expect(server.attributes['llm_route.ttft_ms']).toBeUndefined();
  });
});

describe('the routing decisions as spans', () => {
  it('a hedge: the stalled first tier as hedge_lost, the winner beside it, both marked hedged and overlapping in time', async () => {
    const r = await receiver();
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.closed;
    });
    b.always(healthyStream(['fast']));
    const proxy = await tracedProxy(
      {
        tiers: [
          { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
          { name: 'b', url: b.url },
        ],
        routeKeys: { hedge_ms: 100 },
      },
      r,
    );
    expect(sseText(await (await chat(proxy, { stream: true })).text())).toBe('fast');
    const { server, attempts } = await traceOf(r, 2);
    const [loser, winner] = attempts;
    expect(loser.attributes).toMatchObject({ 'llm_route.tier': 'a', 'error.type': 'hedge_lost', 'llm_route.hedged': true, 'llm_route.hedge.result': 'lost' });
    expect(winner.attributes).toMatchObject({ 'llm_route.tier': 'b', 'llm_route.hedged': true, 'llm_route.hedge.result': 'won' });
    expect(winner.attributes['error.type']).toBeUndefined();
    // b started about hedge_ms after a, while a was still waiting; a was stopped once b committed.
    expect(winner.start - loser.start).toBeGreaterThanOrEqual(90_000_000n);
    expect(loser.end).toBeGreaterThan(winner.start);
    expect(loser.end).toBeLessThanOrEqual(winner.end);
    expect(server.attributes['llm_route.tier']).toBe('b');
  });

  it('a recovery (on_break: resume): the broken stream ends where the recovery starts; the recovery is marked resumed', async () => {
    const r = await receiver();
    const { breakAfter, taggedStream, WORDS, FULL } = await import('../../helpers/resume-scripts.js');
    const a = await h.fake();
    const b = await h.fake();
    a.always(breakAfter(4));
    b.always(taggedStream(WORDS.slice(4), 'second'));
    const proxy = await tracedProxy(
      {
        tiers: [
          { name: 'a', url: a.url, retry: { attempts: 1 } },
          { name: 'b', url: b.url, retry: { attempts: 1 } },
        ],
        routeKeys: { on_break: 'resume' },
      },
      r,
    );
    expect(sseText(await (await chat(proxy, { stream: true })).text())).toBe(FULL);
    const { server, attempts } = await traceOf(r, 2);
    const [first, recovery] = attempts;
    expect(first.attributes).toMatchObject({ 'llm_route.tier': 'a' });
    expect(first.attributes['error.type']).toBeUndefined(); // it answered: its stream was committed
    expect(first.attributes['llm_route.resumed']).toBeUndefined();
    expect(recovery.attributes).toMatchObject({
      'llm_route.tier': 'b',
      'llm_route.resumed': true,
      'llm_route.resume.how': 'continue',
      'llm_route.resume.result': 'ok',
      'llm_route.resume.why': 'break',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(first.end).toBeLessThanOrEqual(recovery.start);
    expect(first.end - first.start).toBeGreaterThan(30_000_000n); // it streamed four words and broke 30 ms later
    expect(recovery.end).toBe(server.end);
  });

  it('a tool call written as text: the attempt that failed over for it and the one whose call was recovered', async () => {
    const r = await receiver();
    const { HERMES } = await import('../../helpers/tool-text-forms.js');
    const { CHAT_TOOLS, ollamaContent, piecesOf } = await import('../../helpers/tool-text-kit.js');
    const local = await h.fake();
    const second = await h.fake();
    local.always(ollamaContent(piecesOf(HERMES.replace('Bash', 'Nope'))));
    second.always(ollamaContent(piecesOf(`\n${HERMES}`)));
    const proxy = await tracedProxy(
      {
        tiers: [
          { name: 'local', url: `http://127.0.0.1:${local.port}`, type: 'ollama', model: 'qwen2.5-coder:7b' },
          { name: 'second', url: `http://127.0.0.1:${second.port}`, type: 'ollama', model: 'qwen3:8b' },
        ],
      },
      r,
    );
    const res = await chat(proxy, { stream: true, tools: CHAT_TOOLS, messages: [{ role: 'user', content: 'list files' }] });
    expect(await res.text()).toContain('"name":"Bash"');
    const { attempts } = await traceOf(r, 2);
    const [failed, recovered] = attempts;
    expect(failed.name).toBe('chat qwen2.5-coder:7b');
    expect(failed.attributes).toMatchObject({
      'gen_ai.provider.name': 'ollama',
      'error.type': 'bad_tool_call',
      'llm_route.tool_text.format': 'hermes',
      'llm_route.tool_text.result': 'failed_over',
    });
    expect(recovered.attributes).toMatchObject({
      'llm_route.tier': 'second',
      'llm_route.tool_text.format': 'hermes',
      'llm_route.tool_text.result': 'recovered',
      'llm_route.tool_text.calls': 1,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    // No prompt or answer text in any span.
    const text = JSON.stringify(r.spans, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const words of ['list files', 'ls -la', 'Nope', 'tool_call>']) expect(text).not.toContain(words);
  });
});

describe("the client's trace", () => {
  const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const CLIENT_SPAN = '00f067aa0ba902b7';

  it('a valid traceparent makes the request span a child of the client span, in its trace, with its tracestate', async () => {
    const r = await receiver();
    const up = await h.fake();
    up.always(healthyStream(['ok']));
    const proxy = await tracedProxy({ tiers: [{ name: 'local', url: up.url }] }, r);
    await (await chat(proxy, { stream: true }, { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`, tracestate: 'vendor=abc,other=1' } })).text();
    const { server, attempts } = await traceOf(r, 1, CLIENT_TRACE);
    expect(server.parentSpanId).toBe(CLIENT_SPAN);
    expect(server.spanId).not.toBe(CLIENT_SPAN);
    expect(server.traceState).toBe('vendor=abc,other=1');
    expect(attempts[0].traceId).toBe(CLIENT_TRACE);
    expect(attempts[0].parentSpanId).toBe(server.spanId);
    // The upstream is never sent the client's trace context (llm-route forwards no client header by default).
    expect(up.requests[0].headers.traceparent).toBeUndefined();
  });

  it('an invalid traceparent is ignored (a trace of its own); an unsampled one is not recorded', async () => {
    const r = await receiver();
    const up = await h.fake();
    up.always(healthyStream(['ok']));
    const proxy = await tracedProxy({ tiers: [{ name: 'local', url: up.url }] }, r);
    for (const invalid of [
      `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01`,
      `00-${CLIENT_TRACE.toUpperCase()}-${CLIENT_SPAN}-01`,
      'garbage',
      `ff-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
    ]) {
      await (await chat(proxy, { stream: true }, { headers: { traceparent: invalid } })).text();
    }
    await (await chat(proxy, { stream: true }, { headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-00` } })).text();
    await waitFor(() => r.spans.filter((s) => s.kind === SERVER).length === 4, 5000, 'four request spans');
    await new Promise((resolve) => setTimeout(resolve, 200)); // the unsampled one would have come with them
    const servers = r.spans.filter((s) => s.kind === SERVER);
    expect(servers).toHaveLength(4);
    for (const server of servers) {
      expect(server.parentSpanId).toBe('');
      expect(server.traceId).not.toBe(CLIENT_TRACE);
    }
    expect(new Set(servers.map((s) => s.traceId)).size).toBe(4);
  });
});
