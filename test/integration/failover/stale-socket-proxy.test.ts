import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { logLine, readAll, useHarness } from '../../helpers/harness.js';
import { sseText } from '../../helpers/proxy.js';

const h = useHarness();

/**
 * llama-server advertises keep-alive and closes the socket after every stream: a pooled socket
 * reused at once is dead. Through the proxy that costs nothing: the request goes again, at once,
 * on a new connection, and is neither an attempt, nor a failure, nor a failover (docs/routing.md, "A stale pooled socket").
 */
describe('a stale keep-alive socket to a llama-server', () => {
  it('is retried once on a new connection: no failover, one attempt, health untouched', async () => {
    const llama = await FakeLlamaServer.start({ words: ['a', ' b'] });
    h.defer(() => llama.close());
    const cloud = await h.fake();
    cloud.always(healthyStream(['cloud']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: llama.url, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${proxy.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: `q${i}` }] }),
      });
      expect(res.headers.get('x-llm-route-tier')).toBe('local');
      expect(res.headers.get('x-llm-route-attempts')).toBe('1');
      expect(sseText((await readAll(res)).text)).toBe('a b');
      ids.push(res.headers.get('x-request-id') as string);
    }
    // The fake closes a socket when it is reused: every other request met a dead pooled socket
    // (the retry goes on a connection of its own, so the next one opens a new pooled socket).
    expect(llama.staleHits).toBeGreaterThanOrEqual(3);
    expect(cloud.requests).toHaveLength(0);
    for (const id of ids) expect(((await logLine(proxy, id)).attempts as unknown[]).length).toBe(1);
    const health = (await (await fetch(`${proxy.origin}/healthz`)).json()) as {
      routes: { chat: { tiers: Array<{ name: string; state: string; failures: number }> } };
    };
    expect(health.routes.chat.tiers[0]).toMatchObject({ name: 'local', state: 'healthy', failures: 0 });
  });

  it('a reset on a new connection is still a real failure (fail over)', async () => {
    const dead = await h.fake();
    dead.always((ctx) => ctx.destroy());
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('cloud')));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: dead.url, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(dead.requests).toHaveLength(1); // no free retry: the socket was new
  });
});
