import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { ProxyServer } from '../../../src/server/server.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, sleep, useHarness, waitFor } from '../../helpers/harness.js';
import { OtlpReceiver, SERVER } from '../../helpers/otlp-receiver.js';
import { chat, configYaml, type RunningProxy, sseText, type TierSpec } from '../../helpers/proxy.js';

// docs/traces.md: exporting never slows or fails a request. A collector that is down or refuses
// spans drops them (counted, said once, and again once it takes them), a full queue drops its
// oldest, a stopping server flushes what it holds, and a reload turns traces on, elsewhere and off.

const h = useHarness();

async function receiver(port = 0): Promise<OtlpReceiver> {
  const r = await OtlpReceiver.start(port);
  h.defer(() => r.close());
  return r;
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A proxy built here (not by startProxy) so that a test can reload it with another tier file
 * and close it itself: `yaml()` is read at start and on each reload.
 */
async function fileProxy(yaml: () => string, env: Record<string, string>, configEnv: Record<string, string> = {}) {
  const logs: Array<Record<string, unknown>> = [];
  const log = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const read = () => loadConfigText(yaml(), '/test/llm-route.yaml', configEnv);
  const server = new ProxyServer({ config: read(), port: 0, log, env, readConfig: read });
  const { url } = await server.listen();
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.close(500);
  };
  h.defer(close);
  const proxy: RunningProxy = { server, origin: url, baseURL: `${url}/v1`, logs, close };
  return proxy;
}

async function streamOk(proxy: RunningProxy): Promise<void> {
  const res = await chat(proxy, { stream: true });
  expect(res.status).toBe(200);
  expect(sseText(await res.text())).toBe('ok');
}

async function upstream(): Promise<TierSpec[]> {
  const up = await h.fake();
  up.always(healthyStream(['ok']));
  return [{ name: 'local', url: up.url }];
}

const FAST = { OTEL_BSP_SCHEDULE_DELAY: '20' };
const failing = (proxy: RunningProxy) => proxy.logs.filter((l) => l.event === 'trace_export_failing');
const recovered = (proxy: RunningProxy) => proxy.logs.filter((l) => l.event === 'trace_export_recovered');

describe('a collector that cannot take spans', () => {
  it('unreachable: requests are unaffected, the spans are dropped and counted, said once, and again once it answers', async () => {
    const port = await freePort();
    const tiers = await upstream();
    const proxy = await fileProxy(() => configYaml({ tiers }), { ...FAST, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    for (let i = 0; i < 3; i++) {
      await streamOk(proxy);
      await sleep(60); // each in an export of its own
    }
    await waitFor(
      async () => metric((await fetchMetrics(proxy)).samples, 'llm_trace_spans_dropped_total', { reason: 'export_failed' }) === 6,
      5000,
      'six dropped spans',
    );
    expect(failing(proxy)).toHaveLength(1);
    expect(failing(proxy)[0]).toMatchObject({ endpoint: `http://127.0.0.1:${port}/v1/traces`, error: expect.stringContaining('connection refused') });
    // The collector comes up on that port: the next spans reach it, and the log says how many were lost.
    const r = await receiver(port);
    await streamOk(proxy);
    await waitFor(() => r.spans.length === 2, 5000, 'the spans after it came up');
    await waitFor(() => recovered(proxy)[0], 3000, 'a recovered line');
    expect(recovered(proxy)[0]).toMatchObject({ endpoint: `http://127.0.0.1:${port}/v1/traces`, dropped: 6 });
    expect(failing(proxy)).toHaveLength(1);
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_trace_spans_exported_total')).toBe(2);
  });

  it('one that refuses the batch (HTTP 500): dropped, counted, said once with the status; never the headers sent to it', async () => {
    const r = await receiver();
    r.answer = { status: 500 };
    const tiers = await upstream();
    const yaml = () => configYaml({ tiers, top: { telemetry: { otlp: { endpoint: r.url, headers: { 'x-api-key': '${OTLP_KEY}', 'x-team': 'router' } } } } });
    const proxy = await fileProxy(yaml, FAST, { OTLP_KEY: 'otlp-secret-value-123' });
    await streamOk(proxy);
    await streamOk(proxy);
    await waitFor(
      async () => metric((await fetchMetrics(proxy)).samples, 'llm_trace_spans_dropped_total', { reason: 'export_failed' }) === 4,
      5000,
      'four dropped',
    );
    expect(r.exports.length).toBeGreaterThan(0);
    expect(r.exports[0].headers['x-api-key']).toBe('otlp-secret-value-123');
    expect(r.exports[0].headers['x-team']).toBe('router');
    expect(failing(proxy)).toHaveLength(1);
    expect(failing(proxy)[0].error).toBe('the collector answered HTTP 500');
    expect(JSON.stringify(proxy.logs)).not.toContain('otlp-secret-value-123');
    expect((await fetchMetrics(proxy)).text).not.toContain('otlp-secret-value-123');
  });

  it('a full queue drops its oldest spans (a slow collector): the newest still go out', async () => {
    const r = await receiver();
    r.answer = { status: 200, delayMs: 2000 }; // the first export is in flight while the requests below end
    const tiers = await upstream();
    const proxy = await fileProxy(() => configYaml({ tiers }), {
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_BSP_SCHEDULE_DELAY: '10',
      OTEL_BSP_MAX_QUEUE_SIZE: '4',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
    });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await chat(proxy, { stream: true });
      ids.push(res.headers.get('x-request-id') as string);
      await res.text();
    }
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_trace_spans_dropped_total', { reason: 'queue_full' })).toBeGreaterThan(0);
    r.answer = { status: 200 };
    // The last request's spans are never the ones dropped.
    await waitFor(() => r.spans.some((s) => s.kind === SERVER && s.attributes['llm_route.request_id'] === ids[5]), 5000, "the last request's span");
    const dropped = metric((await fetchMetrics(proxy)).samples, 'llm_trace_spans_dropped_total', { reason: 'queue_full' }) as number;
    await waitFor(() => r.spans.length + dropped === 12, 5000, 'every span exported or dropped');
  });
});

describe('traces and the server lifecycle', () => {
  it('a stopping server sends the spans it still holds: runs encoded apart, joined into one valid request', async () => {
    const r = await receiver();
    const tiers = await upstream();
    const proxy = await fileProxy(() => configYaml({ tiers }), { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_BSP_SCHEDULE_DELAY: '60000' });
    for (let i = 0; i < 40; i++) await streamOk(proxy);
    await sleep(100);
    expect(r.spans).toHaveLength(0); // held for the minute-long batch
    await proxy.close();
    // 80 spans: a run of 64 encoded as it filled and the last 16 at the flush, sent as one body.
    expect(r.exports).toHaveLength(1);
    expect(r.errors).toEqual([]);
    expect(r.spans.filter((s) => s.kind === SERVER)).toHaveLength(40);
    expect(r.spans).toHaveLength(80);
    expect(new Set(r.spans.map((s) => s.spanId)).size).toBe(80);
  });

  it('a reload turns traces on, moves them to another collector, and turns them off', async () => {
    const first = await receiver();
    const second = await receiver();
    const tiers = await upstream();
    let telemetry: Record<string, unknown> | undefined;
    const proxy = await fileProxy(() => configYaml({ tiers, top: telemetry ? { telemetry } : {} }), FAST);
    await streamOk(proxy);
    await sleep(100);
    expect(first.spans).toHaveLength(0);

    telemetry = { otlp: { endpoint: first.url } };
    expect(proxy.server.reload().ok).toBe(true);
    await streamOk(proxy);
    await waitFor(() => first.spans.length === 2, 5000, 'spans at the first collector');

    telemetry = { otlp: { endpoint: second.url, protocol: 'http/json' } };
    expect(proxy.server.reload().ok).toBe(true);
    await streamOk(proxy);
    await waitFor(() => second.spans.length === 2, 5000, 'spans at the second collector');
    expect(second.exports[0].contentType).toBe('application/json');
    expect(first.spans).toHaveLength(2);

    telemetry = undefined;
    expect(proxy.server.reload().ok).toBe(true);
    await streamOk(proxy);
    await sleep(200);
    expect(first.spans).toHaveLength(2);
    expect(second.spans).toHaveLength(2);
  });

  it('settings llm-route cannot use are said once and leave traces off: a gRPC protocol, an endpoint that is not a URL', async () => {
    const tiers = await upstream();
    const grpc = await fileProxy(() => configYaml({ tiers }), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    await streamOk(grpc);
    expect(failing(grpc)).toEqual([expect.objectContaining({ error: expect.stringContaining('OTLP protocol "grpc" is not supported') })]);
    const bad = await fileProxy(() => configYaml({ tiers }), { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' });
    await streamOk(bad);
    expect(failing(bad)).toEqual([expect.objectContaining({ error: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not an http:// or https:// URL; traces are off' })]);
  });
});
