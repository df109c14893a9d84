import { describe, expect, it } from 'vitest';
import { chunk } from '../../helpers/fake-upstream.js';
import { chat, sseData, sseText } from '../../helpers/proxy.js';
import { sleep, useHarness } from '../../helpers/harness.js';

/** Edge cases found in review: each test failed before its fix. */
const h = useHarness();

describe('stream edge cases', () => {
  it('[DONE] ends the client response even when the upstream keeps its side open', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.content('all');
      ctx.finish();
      ctx.raw('data: [DONE]\n\n');
      await ctx.closed; // never ends the response itself
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: { idle_ms: 3000 } }] });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    const text = await res.text();
    expect(performance.now() - started).toBeLessThan(2000); // not the 3 s idle guard
    expect(sseData(text).at(-1)).toBe('[DONE]');
    expect(text).not.toContain('stream_interrupted');
    await expect.poll(() => p.logs.find((l) => l.event === 'request')?.outcome).toBe('ok');
  });

  it('a chunk that fails an attempt and then carries content does not revive it', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((ctx) => {
      ctx.startStream();
      // One write: an error event, then content from the same (failed) attempt.
      ctx.raw(`data: {"error":{"message":"overloaded"}}\n\ndata: ${JSON.stringify(chunk({ content: 'ZOMBIE' }))}\n\n`);
      return ctx.closed;
    });
    cloud.always((ctx) => {
      ctx.startStream();
      ctx.content('cloud text');
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await chat(p, { stream: true });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe('cloud text');
    expect(text).not.toContain('ZOMBIE');
  });

  it('an upstream message that echoes the provider key never reaches the client or the log', async () => {
    const local = await h.fake();
    local.always((ctx) => ctx.error(401, 'Incorrect API key provided: sk-live-SECRET-1234'));
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, api_key: 'sk-live-SECRET-1234' }] });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(502);
    const body = await res.text();
    expect(body).toContain('[redacted]');
    expect(body).not.toContain('SECRET');
    await expect.poll(() => p.logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(p.logs)).not.toContain('SECRET');
    const admin = await (await fetch(`${p.origin}/admin/routes`)).text();
    expect(admin).not.toContain('SECRET');
  });

  it('a tier cut short by the route deadline is not blamed for it', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always((ctx) => {
      ctx.startStream();
      return ctx.closed;
    });
    cloud.always((ctx) => {
      ctx.startStream();
      return ctx.closed;
    });
    const p = await h.proxy({
      deadline_ms: 600,
      tiers: [
        { name: 'local', url: local.url, timeouts: { ttft_ms: 500 } },
        { name: 'cloud', url: cloud.url, timeouts: { ttft_ms: 5000 } },
      ],
    });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(504);
    await res.text();
    const routes = (await (await fetch(`${p.origin}/admin/routes`)).json()) as {
      routes: { chat: { tiers: Array<{ name: string; consecutive_failures: number }> } };
    };
    const byName = Object.fromEntries(routes.routes.chat.tiers.map((t) => [t.name, t.consecutive_failures]));
    expect(byName).toEqual({ local: 1, cloud: 0 });
  });

  it('a reload during a failover backoff keeps the request on the pools (host and key) it started with', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadConfig } = await import('../../../src/config/load.js');
    const { ProxyServer } = await import('../../../src/server/server.js');
    const { configYaml } = await import('../../helpers/proxy.js');
    const oldHost = await h.fake();
    const newHost = await h.fake();
    oldHost.next((ctx) => ctx.error(503, 'busy', { headers: { 'retry-after': '0.4' } }));
    oldHost.always((ctx) => {
      ctx.startStream();
      ctx.content('old host');
      ctx.finish();
      ctx.done();
    });
    newHost.always((ctx) => ctx.error(500, 'should not be asked'));
    const file = join(mkdtempSync(join(tmpdir(), 'llm-route-reload-')), 'llm-route.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: oldHost.url, api_key: 'old-key' }] }));
    const server = new ProxyServer({ config: loadConfig(file, {}), port: 0 });
    h.defer(() => server.close(200));
    const { url } = await server.listen();
    const pending = fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await sleep(150); // inside the Retry-After wait
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: newHost.url, api_key: 'new-key' }] }));
    expect(server.reload().ok).toBe(true);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(sseText(await res.text())).toBe('old host');
    expect(oldHost.requests.map((r) => r.headers.authorization)).toEqual(['Bearer old-key', 'Bearer old-key']);
    expect(newHost.requests).toHaveLength(0);
  });
});
