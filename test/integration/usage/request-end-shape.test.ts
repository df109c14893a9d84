import { describe, expect, it } from 'vitest';
import type { RequestFinished, TelemetryEvent } from '../../../src/telemetry/events.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { chat } from '../../helpers/proxy.js';

/**
 * Every request_end has the same keys in the same order, however the request ended:
 * one hidden class for the event the log, metrics, usage log and health board all read, where
 * events spread from whichever fields an ending had came in dozens of shapes.
 */

const h = useHarness();

describe('request_end', () => {
  it('has one shape for a whole answer, a stream, a failover, an unknown route and a bad body', async () => {
    const up = await h.fake();
    const down = await h.fake();
    up.always((ctx) => ctx.json(200, completion('hi')));
    down.always((ctx) => ctx.error(500, 'boom'));
    const streaming = await h.fake();
    streaming.always(healthyStream(['a', 'b']));
    const p = await h.proxy({
      tiers: [
        { name: 'down', url: down.url },
        { name: 'up', url: up.url },
      ],
    });
    const events: RequestFinished[] = [];
    p.server.app.telemetry.subscribe((event: TelemetryEvent) => {
      if (event.type === 'request_end') events.push(event);
    });

    expect((await chat(p, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200); // failed over to `up`
    expect((await chat(p, { model: 'nope', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(404);
    const bad = await fetch(`${p.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(bad.status).toBe(400);
    await bad.text();
    const q = await h.proxy({ tiers: [{ name: 's', url: streaming.url }] });
    q.server.app.telemetry.subscribe((event: TelemetryEvent) => {
      if (event.type === 'request_end') events.push(event);
    });
    const stream = await chat(q, { stream: true, messages: [{ role: 'user', content: 'hi' }] });
    await stream.text();

    await expect.poll(() => events.length).toBe(4);
    expect(events.map((e) => [e.outcome, e.status])).toEqual([
      ['ok', 200],
      ['bad_request', 404],
      ['bad_request', 400],
      ['ok', 200],
    ]);
    const shapes = new Set(events.map((e) => Object.keys(e).join(',')));
    expect([...shapes]).toHaveLength(1);
    // Absent fields are there as undefined, and the log line still leaves them out.
    expect(Object.keys(events[1])).toEqual(expect.arrayContaining(['usage', 'estimate', 'savers', 'rule', 'error', 'resumed', 'hedged', 'toolText']));
    expect(p.logs.find((l) => l.event === 'request' && l.status === 200)).not.toHaveProperty('rule');
  });
});
