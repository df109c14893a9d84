import { Agent, Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { checkTier } from '../../../src/health/check-tier.js';
import { createStaleAwareAgent, createStaleAwarePool, sendRetryingStale } from '../../../src/util/stale-socket-pool.js';
import { isStaleSocketFailure } from '../../../src/util/stale-socket.js';
import { completion, FakeUpstream, healthyStream } from '../../helpers/fake-upstream.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';

/**
 * llama-server closes its socket after every streamed answer while advertising keep-alive: the
 * next request on that pooled socket fails at once. A real undici Pool against the fake.
 */

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn().catch(() => undefined);
});

async function llama(): Promise<FakeLlamaServer> {
  const server = await FakeLlamaServer.start();
  cleanup.push(() => server.close());
  return server;
}

function pool<P extends Pool>(p: P): P {
  cleanup.push(() => p.destroy());
  return p;
}

const streamRequest = {
  method: 'POST' as const,
  path: '/v1/chat/completions',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'anything', messages: [{ role: 'user', content: 'hi' }], stream: true }),
};

describe('the fake reproduces llama-server', () => {
  it('advertises keep-alive on a stream, then a plain Pool reusing the socket fails with "other side closed"', async () => {
    const server = await llama();
    const plain = pool(new Pool(new URL(server.url).origin, { connections: 1 }));
    const first = await plain.request(streamRequest);
    expect(first.headers.connection).toBe('keep-alive');
    expect(first.headers['keep-alive']).toBe('timeout=5, max=100');
    expect(await first.body.text()).toContain('[DONE]');

    const error = await plain.request(streamRequest).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: 'UND_ERR_SOCKET', message: 'other side closed' });
    expect(server.staleHits).toBe(1);
    // A plain pool cannot tell: nothing marked it.
    expect(isStaleSocketFailure(error)).toBe(false);
  });
});

describe('a stale-aware pool', () => {
  it('marks the failure of a reused socket before any answer', async () => {
    const server = await llama();
    const aware = pool(createStaleAwarePool(new URL(server.url).origin, { connections: 1 }));
    await (await aware.request(streamRequest)).body.text();
    const error = await aware.request(streamRequest).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(isStaleSocketFailure(error)).toBe(true);
  });

  it('sendRetryingStale sends it again once, at once, on a connection of its own', async () => {
    const server = await llama();
    const origin = new URL(server.url).origin;
    const aware = pool(createStaleAwarePool(origin, { connections: 1 }));
    await (await aware.request(streamRequest)).body.text();

    let stale = 0;
    const response = await sendRetryingStale(aware, origin, (d) => d.request(streamRequest), { onStale: () => stale++ });
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toContain('[DONE]');
    expect(stale).toBe(1);
    expect(server.staleHits).toBe(1);
    expect(server.streams).toBe(2);
    const [first, reused, retry] = server.requests.map((r) => r.socketId);
    expect(reused).toBe(first);
    expect(retry).not.toBe(first);
  });

  it('20 streams back to back, 2 at a time: every one answers, each stale socket retried once', async () => {
    const server = await llama();
    const origin = new URL(server.url).origin;
    const aware = pool(createStaleAwarePool(origin, { connections: 2 }));
    let stale = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      while (done < 20) {
        done++;
        const response = await sendRetryingStale(aware, origin, (d) => d.request(streamRequest), { onStale: () => stale++ });
        expect(response.statusCode).toBe(200);
        await response.body.text();
      }
    };
    await Promise.all([worker(), worker()]);
    expect(server.streams).toBe(20);
    expect(stale).toBe(server.staleHits);
    expect(stale).toBeGreaterThan(0);
  });

  it('as the real server does it (FIN right after the last chunk), every request of a quick client answers', async () => {
    const server = await FakeLlamaServer.start({ closeAfterStream: 0 });
    cleanup.push(() => server.close());
    const origin = new URL(server.url).origin;
    const aware = pool(createStaleAwarePool(origin, { connections: 1 }));
    let stale = 0;
    for (let i = 0; i < 20; i++) {
      const response = await sendRetryingStale(aware, origin, (d) => d.request(streamRequest), { onStale: () => stale++ });
      expect(response.statusCode).toBe(200);
      await response.body.text();
    }
    expect(server.streams).toBe(20);
    // How many reuses lost the race varies from run to run (the server never read those); each
    // was sent again once, on a connection of its own, and none failed.
    expect(server.requests).toHaveLength(20);
    expect(stale).toBeLessThanOrEqual(20);
  });

  it('a reset on a new connection is a real failure: not marked, not retried', async () => {
    const fake = await FakeUpstream.start();
    cleanup.push(() => fake.close());
    fake.always((ctx) => ctx.destroy());
    const origin = `http://127.0.0.1:${fake.port}`;
    const aware = pool(createStaleAwarePool(origin));
    let stale = 0;
    const error = await sendRetryingStale(aware, origin, (d) => d.request(streamRequest), { onStale: () => stale++ }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toMatchObject({ code: expect.stringMatching(/^(UND_ERR_SOCKET|ECONNRESET)$/) });
    expect(isStaleSocketFailure(error)).toBe(false);
    expect(stale).toBe(0);
    expect(fake.requests).toHaveLength(1);
  });

  it('a break after the answer began, on a reused socket, is a real failure', async () => {
    const fake = await FakeUpstream.start();
    cleanup.push(() => fake.close());
    fake.next(
      (ctx) => ctx.json(200, completion('one')),
      async (ctx) => {
        ctx.startStream();
        ctx.content('partial');
        await ctx.wait(20);
        ctx.destroy();
      },
    );
    const origin = `http://127.0.0.1:${fake.port}`;
    const aware = pool(createStaleAwarePool(origin, { connections: 1 }));
    await (await aware.request({ ...streamRequest, body: '{}' })).body.text();
    const second = await aware.request(streamRequest);
    expect(second.statusCode).toBe(200);
    const error = await second.body.text().then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).not.toBeNull();
    expect(isStaleSocketFailure(error)).toBe(false);
    expect(fake.requests.map((r) => r.socketId)).toEqual([fake.requests[0].socketId, fake.requests[0].socketId]);
  });

  it('a healthy keep-alive server keeps one socket and never sees a retry', async () => {
    const fake = await FakeUpstream.start();
    cleanup.push(() => fake.close());
    fake.always(healthyStream(['a', 'b']));
    const origin = `http://127.0.0.1:${fake.port}`;
    const aware = pool(createStaleAwarePool(origin, { connections: 1 }));
    let stale = 0;
    for (let i = 0; i < 5; i++) {
      const response = await sendRetryingStale(aware, origin, (d) => d.request(streamRequest), { onStale: () => stale++ });
      await response.body.text();
    }
    expect(stale).toBe(0);
    expect(new Set(fake.requests.map((r) => r.socketId)).size).toBe(1);
  });
});

describe('health checks', () => {
  /** Answers its model list, and closes that socket unanswered when it is used again. */
  async function closesAfterEachAnswer(): Promise<FakeUpstream> {
    const fake = await FakeUpstream.start();
    cleanup.push(() => fake.close());
    const spent = new WeakSet<object>();
    fake.always((ctx) => {
      if (spent.has(ctx.req.socket)) return ctx.destroy();
      spent.add(ctx.req.socket);
      ctx.json(200, { object: 'list', data: [{ id: 'tiny', object: 'model' }] });
    });
    return fake;
  }

  // Checks run seconds apart; a few ms let the first connection go idle, so the second check reuses it.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  const tierAt = (url: string) =>
    loadConfigText(
      `version: 1\nproviders:\n  p: { type: openai, base_url: "${url}" }\nroutes:\n  chat:\n    tiers: [{ provider: p, model: tiny }]\n`,
      '/t.yaml',
      {},
    ).routes.get('chat')!.tiers[0];

  it('a check on a stale pooled socket is retried on a new one and passes', async () => {
    const fake = await closesAfterEachAnswer();
    const agent = createStaleAwareAgent();
    cleanup.push(() => agent.destroy());
    const tier = tierAt(fake.url);
    expect((await checkTier(tier, { timeoutMs: 2000, ttft: false, dispatcher: agent })).status).toBe('healthy');
    await settle();
    const second = await checkTier(tier, { timeoutMs: 2000, ttft: false, dispatcher: agent });
    expect(second.status, second.error).toBe('healthy');
    expect(fake.requests).toHaveLength(3); // the answer, the stale reuse, the retry
  });

  it('the control case: a plain agent reports the stale socket as a failed check', async () => {
    const fake = await closesAfterEachAnswer();
    const agent = new Agent();
    cleanup.push(() => agent.destroy());
    const tier = tierAt(fake.url);
    await checkTier(tier, { timeoutMs: 2000, ttft: false, dispatcher: agent });
    await settle();
    const second = await checkTier(tier, { timeoutMs: 2000, ttft: false, dispatcher: agent });
    expect(second).toMatchObject({ status: 'unhealthy', reachable: false });
    expect(second.error).toMatch(/connection (closed by the server|reset)/);
  });
});

describe('isStaleSocketFailure with facts', () => {
  const closed = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

  it('only a close/reset on a reused connection before any answer', () => {
    expect(isStaleSocketFailure(closed, { reused: true, responseStarted: false })).toBe(true);
    expect(isStaleSocketFailure(reset, { reused: true, responseStarted: false })).toBe(true);
    expect(isStaleSocketFailure(Object.assign(new Error('fetch failed'), { cause: reset }), { reused: true, responseStarted: false })).toBe(true);
    expect(isStaleSocketFailure(closed, { reused: false, responseStarted: false })).toBe(false);
    expect(isStaleSocketFailure(closed, { reused: true, responseStarted: true })).toBe(false);
    expect(isStaleSocketFailure(refused, { reused: true, responseStarted: false })).toBe(false);
    expect(isStaleSocketFailure(null, { reused: true, responseStarted: false })).toBe(false);
  });
});
