import { describe, expect, it } from 'vitest';
import type { AttemptError } from '../../../src/proxy/attempt-error.js';
import type { CommitResult, StreamAttempt } from '../../../src/proxy/stream-attempt.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { TelemetryEvent } from '../../../src/telemetry/events.js';
import type { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { chunk, completion, type FakeUpstream, roleThenSilence, type Script } from '../../helpers/fake-upstream.js';
import { sleep, socketClosed, useHarness, waitFor } from '../../helpers/harness.js';
import { type AttemptOptions, deferred, RecordingPort, sseEvent, startAttempt } from '../../helpers/proxy-parts.js';

/**
 * StreamAttempt from connect to its commit point, through its small interfaces: a recording
 * commit port (and its sink), the wire's real framer and reader, a real undici pool against a
 * scripted HTTP server on port 0. Before commit nothing may reach the port; at commit, once.
 */

const h = useHarness();

interface Started {
  fake: FakeUpstream;
  attempt: StreamAttempt;
  port: RecordingPort;
  client: ClientLifetime;
  telemetry: TelemetryEvent[];
}

type Options = Pick<AttemptOptions, 'ttftBudgetMs' | 'ttftLimit' | 'timeouts'>;

async function attemptAt(script: Script, opts: Options = {}): Promise<Started> {
  const fake = await h.fake();
  fake.next(script);
  const port = new RecordingPort();
  const bus = new TelemetryBus();
  const telemetry: TelemetryEvent[] = [];
  bus.subscribe((event) => telemetry.push(event));
  const { attempt, client } = startAttempt(fake.url, h.defer, { ...opts, port, telemetry: bus });
  return { fake, attempt, port, client, telemetry };
}

/** The attempt's failure (it must not commit). */
async function failure(attempt: StreamAttempt): Promise<AttemptError> {
  const result: CommitResult = await attempt.committed;
  if (result.committed) throw new Error('the attempt committed; it should have failed');
  return result.error;
}

async function relayOf(attempt: StreamAttempt) {
  const result = await attempt.committed;
  if (!result.committed) throw result.error;
  return result.relay;
}

const ROLE = sseEvent(chunk({ role: 'assistant', content: '' }));
const HI = sseEvent(chunk({ content: 'Hi' }));
const THERE = sseEvent(chunk({ content: ' there' }));
const FINISH = sseEvent(chunk({}, 'stop'));
const DONE = sseEvent('[DONE]');

describe('before commit', () => {
  it('holds events (keep-alives dropped), commits exactly once on the first content, and flushes what it held first, in order', async () => {
    const go = deferred();
    const { attempt, port } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(ROLE);
      await ctx.wait(30);
      ctx.raw(': keep-alive\n\n');
      ctx.raw(HI);
      await go.promise;
      ctx.raw(THERE + FINISH);
      ctx.raw(DONE);
      ctx.res.end();
    });
    const relay = await relayOf(attempt);
    expect(port.commits).toEqual([{ tier: 'a', attempts: 3 }]);
    await waitFor(() => port.sink.writes.length > 0, 3000, 'the first write');
    // The first write: exactly the held events, no keep-alive, nothing after the first content.
    expect(port.sink.writes[0].toString()).toBe(ROLE + HI);
    go.resolve();
    const end = await relay.finished;
    expect(end.interruption).toBeNull();
    expect(port.commits).toHaveLength(1);
    // Relayed byte for byte; the upstream's own terminator, none added.
    expect(port.sink.text()).toBe(ROLE + HI + THERE + FINISH + DONE);
    expect(port.sink.ends).toEqual([null]);
    expect(end.text).toBe('Hi there');
  });

  it('a first content in the middle of one chunk: the rest of that chunk goes out after what was held, once', async () => {
    const { attempt, port } = await attemptAt((ctx) => {
      ctx.startStream();
      ctx.raw(ROLE + HI + THERE + FINISH + DONE);
      ctx.res.end();
    });
    const end = await (await relayOf(attempt)).finished;
    expect(end.interruption).toBeNull();
    expect(port.commits).toHaveLength(1);
    expect(port.sink.text()).toBe(ROLE + HI + THERE + FINISH + DONE);
  });

  it('an error event before content fails the attempt (upstream_error, first_token, failover) and closes the upstream', async () => {
    const { attempt, port, fake } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(ROLE);
      ctx.event({ error: { message: 'model crashed', type: 'server_error' } });
      await ctx.closed;
    });
    const error = await failure(attempt);
    expect(error).toMatchObject({ reason: 'upstream_error', phase: 'first_token', failover: true, retryable: false, blame: 'tier' });
    expect(error.message).toContain('model crashed');
    await socketClosed(fake);
    expect(port.commits).toEqual([]);
  });

  it('a malformed event is dropped and counted as a chunk error of the route and tier; the stream goes on', async () => {
    const { attempt, port, telemetry } = await attemptAt((ctx) => {
      ctx.startStream();
      ctx.raw(`data: {"choices": [oops\n\n${HI}${FINISH}${DONE}`);
      ctx.res.end();
    });
    expect((await (await relayOf(attempt)).finished).chunkErrors).toBe(1);
    expect(telemetry).toContainEqual({ type: 'chunk_error', route: 'chat', tier: 'a' });
    expect(port.sink.text()).toBe(HI + FINISH + DONE);
  });
});

describe('the TTFT timer', () => {
  it('no first content within the budget: ttft_timeout, and the upstream is closed', async () => {
    const { attempt, port, fake } = await attemptAt(roleThenSilence('slow'), { ttftBudgetMs: 150 });
    const error = await failure(attempt);
    expect(error).toMatchObject({ reason: 'ttft_timeout', phase: 'first_token', timedOut: true, failover: true, message: 'no first token within 150 ms' });
    await socketClosed(fake);
    expect(port.commits).toEqual([]);
  });

  it("a budget cut by the route's deadline is reported as the deadline, blaming no one", async () => {
    const { attempt } = await attemptAt(roleThenSilence('slow'), { ttftBudgetMs: 150, ttftLimit: 'deadline' });
    expect(await failure(attempt)).toMatchObject({ reason: 'deadline', blame: null, timedOut: true });
  });

  it('ends at commit: a committed stream slower than the budget is not cut', async () => {
    const { attempt, port } = await attemptAt(
      async (ctx) => {
        ctx.startStream();
        ctx.raw(HI);
        await ctx.wait(400);
        ctx.raw(FINISH + DONE);
        ctx.res.end();
      },
      { ttftBudgetMs: 100 },
    );
    const end = await (await relayOf(attempt)).finished;
    expect(end.interruption).toBeNull();
    expect(port.sink.text()).toBe(HI + FINISH + DONE);
  });
});

describe('answers that are not a stream', () => {
  it('an empty stream (the terminator before any content) fails with empty_stream at the terminator, not at the close', async () => {
    const { attempt, port } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(ROLE + DONE);
      await ctx.closed;
    });
    expect(await failure(attempt)).toMatchObject({ reason: 'empty_stream', phase: 'first_token', failover: true });
    expect(port.commits).toEqual([]);
  });

  it('a stream closed with no content and no terminator is empty too', async () => {
    const { attempt } = await attemptAt((ctx) => {
      ctx.startStream();
      ctx.raw(ROLE);
      ctx.res.end();
    });
    expect(await failure(attempt)).toMatchObject({ reason: 'empty_stream' });
  });

  it('an event larger than 4 MiB before commit: answer_too_large, failover, without waiting for its end', async () => {
    const { attempt, port } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(`data: {"x":"${'x'.repeat(4 * 1024 * 1024 + 16)}`);
      await ctx.closed;
    });
    const error = await failure(attempt);
    expect(error).toMatchObject({ reason: 'answer_too_large', failover: true });
    expect(error.message).toBe('upstream answer too large: a stream event larger than 4 MiB');
    expect(port.commits).toEqual([]);
  });

  it('JSON answered to a streaming request: bad_response in the headers phase, failover', async () => {
    const { attempt, port } = await attemptAt((ctx) => ctx.json(200, completion('Hi')));
    expect(await failure(attempt)).toMatchObject({ reason: 'bad_response', phase: 'headers', failover: true });
    expect(port.commits).toEqual([]);
  });
});

describe('after commit', () => {
  it('an upstream that breaks: exactly one error event, the last thing the client gets; no failover', async () => {
    const { attempt, port } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(HI);
      await ctx.wait(50);
      ctx.destroy();
    });
    const end = await (await relayOf(attempt)).finished;
    expect(end.interruption).toMatchObject({ reason: 'broken_stream', phase: 'body', failover: false });
    expect(port.sink.ends).toHaveLength(1);
    const tail = port.sink.ends[0]?.toString() ?? '';
    expect(JSON.parse(tail.replace(/^data: /, '').trim())).toMatchObject({ error: { message: expect.stringContaining('broke after the first token') } });
    expect(port.sink.text()).toBe(HI + tail);
  });

  it('the client leaving aborts the upstream (its socket closes), and nothing more is written', async () => {
    const { attempt, port, client, fake } = await attemptAt(async (ctx) => {
      ctx.startStream();
      ctx.raw(HI);
      await ctx.closed;
    });
    const relay = await relayOf(attempt);
    await waitFor(() => port.sink.writes.length > 0, 3000, 'the first write');
    client.abort();
    expect((await relay.finished).interruption).toMatchObject({ reason: 'client_abort' });
    await socketClosed(fake);
    await sleep(20);
    expect(port.sink.ends).toEqual([]);
    expect(port.sink.text()).toBe(HI);
  });
});
