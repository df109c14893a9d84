import { describe, expect, it } from 'vitest';
import type { Tier } from '../../../src/config/schema.js';
import type { Phase } from '../../../src/proxy/attempt-error.js';
import { ShutdownError } from '../../../src/proxy/shutdown.js';
import { UpstreamDispatch } from '../../../src/proxy/upstream-dispatch.js';
import { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { chunk, type FakeUpstream, healthyStream, headersThenSilence, neverAnswer, type Script } from '../../helpers/fake-upstream.js';
import { sleep, socketClosed, useHarness, waitFor } from '../../helpers/harness.js';
import { chatCall, deferred, poolFor, RecordingReader, tierAt } from '../../helpers/proxy-parts.js';

/**
 * UpstreamDispatch through its reader interface (AnswerReader): a real undici pool (the
 * project's stale-aware one) against a real HTTP server on port 0, a recording reader.
 */

const h = useHarness();

interface Started {
  fake: FakeUpstream;
  dispatch: UpstreamDispatch;
  reader: RecordingReader;
  client: ClientLifetime;
}

/** Starts one dispatch at a fake upstream running `script`, read by a recording reader. */
async function dispatchTo(script: Script, timeouts: Partial<Tier['timeouts']> = {}, phase: Phase = 'first_token'): Promise<Started> {
  const fake = await h.fake();
  fake.next(script);
  const t = tierAt(fake.url, timeouts);
  const client = new ClientLifetime();
  const reader = new RecordingReader(phase);
  const dispatch = new UpstreamDispatch({ tier: t, call: chatCall(t), pool: poolFor(t, h.defer), client }, reader);
  h.defer(() => dispatch.finish());
  dispatch.start();
  return { fake, dispatch, reader, client };
}

/** A stream that sends its role chunk, then waits for `go` before its content and terminator. */
function roleThenWaitFor(go: Promise<void>): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    await go;
    ctx.content('late');
    ctx.finish();
    ctx.done();
  };
}

describe('a 2xx answer', () => {
  it('goes to the reader as it came: its headers, each body chunk, then its end', async () => {
    const { reader } = await dispatchTo(healthyStream(['Hi', ' there']));
    expect(await reader.settled).toEqual({ on: 'end' });
    expect(reader.calls[0]).toEqual({ on: 'headers', status: 200, contentType: 'text/event-stream' });
    expect(reader.calls.slice(1, -1).every((c) => c.on === 'body')).toBe(true);
    const body = reader.body();
    expect(body.indexOf('"Hi"')).toBeGreaterThan(0);
    expect(body.indexOf('" there"')).toBeGreaterThan(body.indexOf('"Hi"'));
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});

describe('a non-2xx answer', () => {
  const cases: Array<{ name: string; status: number; body: unknown; headers?: Record<string, string>; expected: Record<string, unknown> }> = [
    {
      name: "429 with Retry-After: the tier is rate limited, retried after the upstream's delay",
      status: 429,
      body: { error: { message: 'slow down', type: 'rate_limit_error' } },
      headers: { 'retry-after': '2' },
      expected: { reason: 'rate_limited', failover: true, retryable: true, retryAfterMs: 2000, blame: 'tier' },
    },
    {
      name: '503: a server error, worth a retry',
      status: 503,
      body: { error: { message: 'busy', type: 'server_error' } },
      expected: { reason: 'server_error', failover: true, retryable: true, blame: 'tier' },
    },
    {
      name: "400 for a bad parameter: the payload's fault, no failover",
      status: 400,
      body: { error: { message: "Invalid value for 'temperature'", type: 'invalid_request_error' } },
      expected: { reason: 'bad_request', failover: false, retryable: false, blame: 'payload' },
    },
    {
      name: "400 over the context (llama-server's words): another tier may hold it, no health penalty",
      status: 400,
      body: {
        error: {
          code: 400,
          message: 'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it',
          type: 'exceed_context_size_error',
        },
      },
      expected: { reason: 'context_length', failover: true, retryable: false, blame: null },
    },
  ];

  for (const c of cases) {
    it(`${c.name}: one stop with a typed AttemptError, nothing else reaches the reader`, async () => {
      const { reader } = await dispatchTo((ctx) => ctx.json(c.status, c.body, c.headers));
      const call = await reader.settled;
      expect(reader.calls).toEqual([call]);
      if (call.on !== 'stop') throw new Error(`expected a stop, got ${call.on}`);
      expect(call.error).toMatchObject({ name: 'AttemptError', status: c.status, phase: 'headers', ...c.expected });
      expect(call.error.message).toMatch(new RegExp(`^HTTP ${c.status}: `));
      // The upstream's own answer is kept for a pass-through to the client.
      expect(JSON.parse(call.error.upstream?.body.toString('utf8') ?? '')).toEqual(c.body);
    });
  }

  it('an error body that goes on and on is judged by its first 64 KiB, without waiting for its end', async () => {
    const { reader, fake } = await dispatchTo(async (ctx) => {
      ctx.res.writeHead(500, { 'content-type': 'text/plain' });
      ctx.res.write('x'.repeat(70 * 1024));
      await ctx.closed;
    });
    const call = await reader.settled;
    expect(call).toMatchObject({ on: 'stop', error: { reason: 'server_error', status: 500 } });
    if (call.on === 'stop') expect(call.error.upstream?.body.length).toBe(64 * 1024);
    // Judged while the upstream was still sending.
    expect(fake.socketClosedAt.size).toBe(0);
  });
});

describe('the total timer', () => {
  it('stops the reader with total_timeout, in the phase the reader says it is in', async () => {
    const { reader } = await dispatchTo(neverAnswer, { total_ms: 150 }, 'connect');
    const call = await reader.settled;
    expect(call).toMatchObject({ on: 'stop', error: { reason: 'total_timeout', phase: 'connect', timedOut: true, failover: true } });
    expect(reader.calls).toEqual([call]);
  });

  it('ends at handOver: the reader handed over to reads on well past total_ms, and is never stopped', async () => {
    const go = deferred();
    const { dispatch, reader: first } = await dispatchTo(roleThenWaitFor(go.promise), { total_ms: 100 });
    await waitFor(() => first.calls.some((c) => c.on === 'body'), 3000, 'the role chunk');
    const relay = new RecordingReader('body');
    dispatch.handOver(relay);
    // A timer of 100 ms armed before this 400 ms wait would have fired during it.
    await sleep(400);
    go.resolve();
    expect(await relay.settled).toEqual({ on: 'end' });
    expect(relay.body()).toContain('"late"');
    expect(first.calls.map((c) => c.on)).toEqual(['headers', 'body']);
  });
});

describe('cancel', () => {
  it('destroys the socket of a call in flight (the server sees it close), and the reader hears nothing of the abort', async () => {
    const { dispatch, reader, fake } = await dispatchTo(headersThenSilence);
    await waitFor(() => reader.calls.length > 0, 3000, 'the headers');
    dispatch.cancel(new Error('stopped by the test'));
    await socketClosed(fake);
    await sleep(50);
    expect(reader.calls.map((c) => c.on)).toEqual(['headers']);
  });

  it('before the call has a connection: the request is never written', async () => {
    const { dispatch, fake } = await dispatchTo(neverAnswer);
    dispatch.cancel(new Error('stopped by the test'));
    await sleep(300);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('the client leaving', () => {
  it('aborts the upstream (its socket closes) and tells the reader client_abort, in its phase', async () => {
    const { client, reader, fake } = await dispatchTo(headersThenSilence);
    await waitFor(() => reader.calls.length > 0, 3000, 'the headers');
    client.abort();
    expect(reader.calls.at(-1)).toMatchObject({ on: 'clientGone', error: { reason: 'client_abort', phase: 'first_token', failover: false, blame: null } });
    await socketClosed(fake);
  });

  it('a stopping server is told apart: reason shutdown', async () => {
    const { client, reader, fake } = await dispatchTo(headersThenSilence);
    await waitFor(() => reader.calls.length > 0, 3000, 'the headers');
    client.abort(new ShutdownError());
    expect(reader.calls.at(-1)).toMatchObject({ on: 'clientGone', error: { reason: 'shutdown', failover: false } });
    await socketClosed(fake);
  });

  it('after finish, no longer concerns the call', async () => {
    const { client, dispatch, reader } = await dispatchTo(healthyStream(['Hi']));
    await reader.settled;
    dispatch.finish();
    client.abort();
    expect(reader.calls.map((c) => c.on)).not.toContain('clientGone');
  });
});

describe('the stale-socket retry', () => {
  it('a pooled socket the server had closed: sent again at once on a connection of its own, the reader never sees the failure', async () => {
    const server = await FakeLlamaServer.start();
    h.defer(() => server.close());
    const t = tierAt(server.url);
    const pool = poolFor(t, h.defer);
    const run = (): RecordingReader => {
      const reader = new RecordingReader();
      const dispatch = new UpstreamDispatch({ tier: t, call: chatCall(t), pool, client: new ClientLifetime() }, reader);
      h.defer(() => dispatch.finish());
      dispatch.start();
      void reader.settled.then(() => dispatch.finish());
      return reader;
    };
    expect(await run().settled).toEqual({ on: 'end' });
    const second = run();
    expect(await second.settled).toEqual({ on: 'end' });
    expect(second.calls[0]).toMatchObject({ on: 'headers', status: 200 });
    expect(second.body()).toContain('data: [DONE]');
    expect(server.staleHits).toBe(1);
    const [first, reused, retry] = server.requests.map((r) => r.socketId);
    expect(reused).toBe(first);
    expect(retry).not.toBe(first);
    // The retry's own connection is closed once its request is done, not left to undici's
    // keep-alive timeout (3 s and more here): 1 s is a generous bound for a close at once.
    await socketClosed(server.fake, 2, 1_000);
  });

  it('a reset on a new connection is a real failure: onBroken with connection_reset, not sent again', async () => {
    const { reader, fake } = await dispatchTo((ctx) => ctx.destroy());
    const call = await reader.settled;
    expect(call).toMatchObject({ on: 'broken', error: { reason: 'connection_reset', failover: true, retryable: true } });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('pause and resume (a client that does not keep up)', () => {
  it('pause stops the answer reaching the reader; resume lets the rest through', async () => {
    const { dispatch, reader } = await dispatchTo(async (ctx) => {
      ctx.startStream();
      for (let i = 0; i < 40 && !ctx.isClosed(); i++) {
        ctx.content(`w${i} `);
        await ctx.wait(10);
      }
      ctx.finish();
      ctx.done();
    });
    await waitFor(() => reader.body().includes('w0 '), 3000, 'the first word');
    dispatch.pause();
    const whilePaused = reader.calls.length;
    await sleep(300);
    // At most what undici had already read off the socket when it was paused.
    expect(reader.calls.length - whilePaused).toBeLessThanOrEqual(1);
    dispatch.resume();
    expect(await reader.settled).toEqual({ on: 'end' });
    expect(reader.body()).toContain('w39 ');
  });
});

describe('lingerFor', () => {
  it('cuts an upstream that keeps its response open after the answer is complete', async () => {
    const { dispatch, reader, fake } = await dispatchTo(async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ content: 'Hi' }, 'stop'));
      ctx.raw('data: [DONE]\n\n');
      await ctx.closed;
    });
    await waitFor(() => reader.body().includes('[DONE]'), 3000, 'the terminator');
    dispatch.lingerFor(100);
    await socketClosed(fake);
    expect(reader.calls.map((c) => c.on)).not.toContain('broken');
  });
});
