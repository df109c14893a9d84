import { describe, expect, it } from 'vitest';
import { ShutdownError } from '../../../src/proxy/shutdown.js';
import type { RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { chatRoute, exchangeOn, loadSpec, parsedRequest, realState } from '../../helpers/loop-kit.js';

/**
 * The exchange (src/proxy/exchange.ts), the one way out to the client, on a real node:http
 * response: a stream commits once, an error exit is one call (fail), and the request ends with
 * exactly one request_end; closing it ends whatever the request still holds.
 */

const h = useHarness();

const config = loadSpec({ tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1' }] });
const tierA = chatRoute(config).tiers[0];

const ends = (events: TelemetryEvent[]) => events.filter((e): e is RequestFinished => e.type === 'request_end');

describe('Exchange', () => {
  it('commit: status and routing headers once, the sink for the rest; the commit event and the TTFT', async () => {
    const { exchange, events, received } = await exchangeOn(h, config);
    exchange.begin(chatRoute(config), parsedRequest({ stream: true }));
    const sink = exchange.commit(tierA, 2);
    sink.write(Buffer.from('data: {"x":1}\n\n'));
    sink.end(Buffer.from('data: [DONE]\n\n'));
    const got = await received;
    expect(got).toMatchObject({
      status: 200,
      headers: {
        'x-request-id': 'req-test',
        'x-llm-route-route': 'chat',
        'x-llm-route-tier': 'a',
        'x-llm-route-attempts': '2',
        'content-type': 'text/event-stream; charset=utf-8',
      },
      body: 'data: {"x":1}\n\ndata: [DONE]\n\n',
    });
    expect(Number(got?.headers['x-llm-route-ttft-ms'])).toBeGreaterThanOrEqual(0);
    expect(events.filter((e) => e.type === 'commit')).toEqual([expect.objectContaining({ tier: 'a', route: 'chat' })]);
    expect(exchange.ttftMs).toBeGreaterThanOrEqual(0);
    exchange.close();
  });

  it("fail: the error in the client's protocol, and the request's one end saying why (the log's own words when given)", async () => {
    const { exchange, events, received } = await exchangeOn(h, config, { protocol: 'messages' });
    exchange.begin(chatRoute(config), parsedRequest({ max_tokens: 10 }, 'messages'));
    exchange.fail(
      { status: 429, kind: 'rate_limit', code: 'rate_limited', message: 'slow down, please' },
      { outcome: 'failed', logged: 'slow down' },
      { 'retry-after': 3 },
    );
    const got = await received;
    expect(got?.status).toBe(429);
    expect(got?.headers).toMatchObject({ 'retry-after': '3', 'x-llm-route-route': 'chat', 'content-type': 'application/json' });
    expect(JSON.parse(got?.body ?? '')).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down, please' } });
    expect(ends(events)).toEqual([expect.objectContaining({ status: 429, outcome: 'failed', error: 'slow down', tier: null, protocol: 'messages' })]);
    exchange.close();
  });

  it('fail before the request began: no route header, and the end names no route', async () => {
    const { exchange, events, received } = await exchangeOn(h, config);
    exchange.fail({ status: 400, kind: 'invalid_request', code: 'invalid_request', message: 'not JSON' }, { outcome: 'bad_request' });
    const got = await received;
    expect(got?.status).toBe(400);
    expect(got?.headers['x-llm-route-route']).toBeUndefined();
    expect(ends(events)).toEqual([expect.objectContaining({ route: '', outcome: 'bad_request', error: 'not JSON' })]);
    exchange.close();
  });

  it('finish once: a second ending changes nothing', async () => {
    const { exchange, events, received } = await exchangeOn(h, config);
    exchange.begin(chatRoute(config), parsedRequest({}));
    exchange.fail({ status: 502, kind: 'upstream', code: 'all_tiers_failed', message: 'all failed' }, { outcome: 'failed' });
    exchange.finish({ tier: 'a', status: 200, outcome: 'ok' });
    exchange.endAborted();
    await received;
    expect(ends(events)).toHaveLength(1);
    expect(exchange.ending).toMatchObject({ status: 502, outcome: 'failed' });
    exchange.close();
  });

  it('a token count (announce: false) is no request: neither its start nor its end is published', async () => {
    const { exchange, events, received } = await exchangeOn(h, config);
    exchange.begin(chatRoute(config), parsedRequest({}), { announce: false });
    exchange.respondJson(200, { input_tokens: 3 });
    exchange.finish({ tier: null, status: 200, outcome: 'ok' });
    expect((await received)?.body).toBe('{"input_tokens":3}');
    expect(events.filter((e) => e.type === 'request_start' || e.type === 'request_end')).toEqual([]);
    exchange.close();
  });

  it('aborted: a client that left is recorded 499 with nothing written; a shutdown answers 503', async () => {
    const left = await exchangeOn(h, config);
    left.exchange.begin(chatRoute(config), parsedRequest({}));
    left.hangUp();
    await waitFor(() => left.exchange.client.aborted, 3000, 'the client to leave');
    left.exchange.endAborted([], 'a');
    expect(ends(left.events)).toEqual([expect.objectContaining({ status: 499, outcome: 'client_abort', tier: 'a' })]);
    left.exchange.close();

    const stopping = await exchangeOn(h, config);
    stopping.exchange.begin(chatRoute(config), parsedRequest({}));
    stopping.exchange.client.abort(new ShutdownError());
    stopping.exchange.endAborted();
    expect(await stopping.received).toMatchObject({ status: 503 });
    expect(ends(stopping.events)).toEqual([expect.objectContaining({ status: 503, outcome: 'failed', error: 'shutting down' })]);
    stopping.exchange.close();
  });

  it('close ends what the request still holds at its tiers', async () => {
    const limited = loadSpec({ tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1', provider: { limits: { concurrency: 1, queue_ms: 0 } } }] });
    const state = realState(limited, h.defer);
    const { exchange } = await exchangeOn(h, limited, { state });
    const routing = exchange.begin(chatRoute(limited), parsedRequest({}));
    const [a] = chatRoute(limited).tiers;
    expect(await routing.holds?.reserve(a, exchange.client)).toEqual({ ok: true });
    const inFlight = () => state.limitsView('p_a', { queue_ms: 0, concurrency: 1 }).in_flight;
    expect(inFlight()).toBe(1);
    exchange.close();
    expect(inFlight()).toBe(0);
  });
});
