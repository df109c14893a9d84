import { describe, expect, it } from 'vitest';
import { chunk, headersThenSilence, healthyStream, neverAnswer, roleThenSilence, type Script, taggedChunk } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, sleep, socketClosed, useHarness } from '../../helpers/harness.js';
import { chat, roleChunks, sseText } from '../../helpers/proxy.js';

/**
 * Streams before commit: the TTFT budget, events held until the first content event, a
 * stream that breaks before it, and a client that leaves while the proxy is still waiting.
 */

const h = useHarness();
const CLOUD_TEXT = 'from cloud';
const TTFT = 300;

async function slowLocal(script: Script, local: Record<string, unknown> = {}) {
  const lf = await h.fake();
  const cloud = await h.fake();
  lf.always(script);
  cloud.always(healthyStream(['from', ' cloud']));
  const p = await h.proxy({
    tiers: [
      { name: 'local', url: lf.url, timeouts: { ttft_ms: TTFT }, ...local },
      { name: 'cloud', url: cloud.url },
    ],
  });
  return { local: lf, cloud, p };
}

describe('stream failover: TTFT budget', () => {
  it('headers then silence → TTFT timeout → next tier; the abandoned socket is closed first', async () => {
    const { local, cloud, p } = await slowLocal(headersThenSilence);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    // TTFT counts from the request's arrival: the wasted budget is in it.
    expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeGreaterThanOrEqual(TTFT - 20);
    expect(sseText(await res.text())).toBe(CLOUD_TEXT);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    expect(cloud.requests[0].body.model).toBe('cloud-model');
    const closedAt = await socketClosed(local, 0);
    // "its socket confirmed closed before the next tier is tried"
    expect(closedAt).toBeLessThanOrEqual(cloud.requests[0].at);
    const log = await requestLog(p);
    expect(log.attempts).toMatchObject([
      { tier: 'local', outcome: 'ttft_timeout' },
      { tier: 'cloud', outcome: 'ok' },
    ]);
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_failovers_total', { route: 'chat', from_tier: 'local', reason: 'ttft_timeout' })).toBe(1);
    expect(metric(metrics, 'llm_requests_total', { route: 'chat', tier: 'cloud', outcome: 'ok' })).toBe(1);
  });

  it("a role-only chunk does not commit: TTFT timeout → next tier, tier 1's role chunk never reaches the client", async () => {
    const { local, cloud, p } = await slowLocal(roleThenSilence('local'));
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('chatcmpl-local');
    expect(roleChunks(text)).toBe(1);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    await socketClosed(local, 0);
  });

  it('no response at all → TTFT timeout → next tier', async () => {
    const { local, cloud, p } = await slowLocal(neverAnswer);
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(TTFT - 20);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(sseText(await res.text())).toBe(CLOUD_TEXT);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    await socketClosed(local, 0);
  });

  it('a first token after the budget is too late: next tier, the late text never appears', async () => {
    const late: Script = async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      await ctx.wait(2 * TTFT);
      ctx.event(taggedChunk('local', { content: 'LATE' }));
      ctx.event(taggedChunk('local', {}, 'stop'));
      ctx.done();
    };
    const { local, cloud, p } = await slowLocal(late);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('LATE');
    expect(text).not.toContain('chatcmpl-local');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    await socketClosed(local, 0);
  });

  it('a tier that timed out is not retried, even with retry.attempts 3', async () => {
    const { local, cloud, p } = await slowLocal(headersThenSilence, { retry: { attempts: 3, base_ms: 5 } });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    expect(sseText(await res.text())).toBe(CLOUD_TEXT);
    await sleep(50);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });
});

describe('stream: the commit point', () => {
  it('sends no status and no byte before the first content event, then flushes the held events', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.wait(250);
      ctx.content('Hi');
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url, timeouts: { ttft_ms: 2000 } }] });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(res.headers.get('x-llm-route-route')).toBe('chat');
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
    expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeGreaterThanOrEqual(200);
    const text = await res.text();
    expect(roleChunks(text)).toBe(1);
    expect(text.indexOf('"role":"assistant"')).toBeLessThan(text.indexOf('"content":"Hi"'));
    expect(sseText(text)).toBe('Hi');
  });

  it.each([['reasoning_content'], ['reasoning']])('a %s delta is a first content event: commits within the budget, no failover', async (field) => {
    const thinker: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      await ctx.wait(50);
      ctx.event(chunk({ [field]: 'thinking...' }));
      await ctx.wait(TTFT + 50);
      ctx.content('answer');
      ctx.finish();
      ctx.done();
    };
    const { local, cloud, p } = await slowLocal(thinker);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(Number(res.headers.get('x-llm-route-ttft-ms'))).toBeLessThan(TTFT);
    const text = await res.text();
    expect(text).toContain('thinking...');
    expect(sseText(text)).toBe('answer');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
  });

  it('a break after a role chunk but before the first content → next tier', async () => {
    const roleThenBreak: Script = async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      await ctx.wait(30);
      ctx.destroy();
    };
    const { local, cloud, p } = await slowLocal(roleThenBreak, { retry: { attempts: 1 }, timeouts: { ttft_ms: 2000 } });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(res.headers.get('x-llm-route-attempts')).toBe('2');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('chatcmpl-local');
    expect(roleChunks(text)).toBe(1);
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });

  it('a stream that ends cleanly before any content ([DONE] after a role chunk) → next tier', async () => {
    const empty: Script = (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      ctx.done();
    };
    const { local, cloud, p } = await slowLocal(empty, { timeouts: { ttft_ms: 2000 } });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('chatcmpl-local');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });
});

describe('stream: other pre-commit failures fail over', () => {
  it('an error event before the first content → next tier, the error never reaches the client', async () => {
    const errorFirst: Script = async (ctx) => {
      ctx.startStream();
      ctx.event(taggedChunk('local', { role: 'assistant', content: '' }));
      ctx.event({ error: { message: 'LOCAL model crashed', type: 'server_error' } });
      await ctx.closed;
    };
    const { local, cloud, p } = await slowLocal(errorFirst, { timeouts: { ttft_ms: 2000 } });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('LOCAL model crashed');
    expect(text).not.toContain('chatcmpl-local');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    await socketClosed(local, 0);
  });

  it('a JSON answer to a stream request → next tier', async () => {
    const { local, cloud, p } = await slowLocal(
      (ctx) =>
        ctx.json(200, {
          id: 'chatcmpl-local',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'LOCAL' }, finish_reason: 'stop' }],
        }),
      { timeouts: { ttft_ms: 2000 } },
    );
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('chatcmpl-local');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });

  it('keep-alive comments do not commit a stream: TTFT timeout → next tier', async () => {
    const pings: Script = async (ctx) => {
      ctx.startStream();
      for (let i = 0; i < 20 && !ctx.isClosed(); i++) {
        ctx.raw(': LOCAL-PING\n\n');
        await ctx.wait(50);
      }
      await ctx.closed;
    };
    const { local, p } = await slowLocal(pings);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const text = await res.text();
    expect(sseText(text)).toBe(CLOUD_TEXT);
    expect(text).not.toContain('LOCAL-PING');
    expect(local.requests).toHaveLength(1);
    await socketClosed(local, 0);
  });
});

describe('stream: client abort before commit', () => {
  it('closes the upstream while waiting for the first token and tries no other tier', async () => {
    const { local, cloud, p } = await slowLocal(headersThenSilence, { timeouts: { ttft_ms: 5000 } });
    const ac = new AbortController();
    const pending = chat(p, { stream: true }, { signal: ac.signal }).catch((e: unknown) => e);
    await (async () => {
      const until = performance.now() + 2000;
      while (local.requests.length === 0 && performance.now() < until) await sleep(5);
    })();
    expect(local.requests).toHaveLength(1);
    await sleep(100);
    const abortedAt = performance.now();
    ac.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(Error);
    const closedAt = await socketClosed(local, 0, 2000);
    expect(closedAt - abortedAt).toBeLessThan(100);
    await sleep(100);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log.outcome).toBe('client_abort');
  });
});
