import { type IncomingMessage, request } from 'node:http';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { chunk, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, sleep, socketClosed, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, errorEvents, sseData, sseText, usageOnlyChunks } from '../../helpers/proxy.js';

/**
 * Streams after commit: the relay (byte for byte, flushed per event), breaks and stalls
 * (one error event, no splice), malformed events, [DONE], usage, client aborts, concurrency.
 */

const h = useHarness();

async function setup(script: Script, localTimeouts: Record<string, number> = {}) {
  const local = await h.fake();
  const cloud = await h.fake();
  local.always(script);
  cloud.always(healthyStream(['CLOUD', ' TEXT']));
  const p = await h.proxy({
    tiers: [
      { name: 'local', url: local.url, timeouts: { ttft_ms: 2000, ...localTimeouts }, retry: { attempts: 3, base_ms: 5 } },
      { name: 'cloud', url: cloud.url },
    ],
  });
  return { local, cloud, p };
}

const twoChunksThenDeath: Script = async (ctx) => {
  ctx.startStream();
  ctx.role();
  ctx.content('one ');
  ctx.content('two');
  await ctx.wait(50);
  ctx.destroy();
};

describe('stream after commit: breaks and stalls', () => {
  it('death after two content chunks → those chunks, one stream_interrupted error event, no [DONE], no second provider', async () => {
    const { local, cloud, p } = await setup(twoChunksThenDeath);
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    expect(res.headers.get('x-llm-route-attempts')).toBe('1');
    const text = await res.text();
    expect(sseText(text)).toBe('one two');
    const data = sseData(text);
    expect(data).not.toContain('[DONE]');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error.code).toBe('stream_interrupted');
    // the error event is the very last thing the client gets
    expect(JSON.parse(data[data.length - 1])).toEqual(errors[0]);
    expect(text).not.toContain('CLOUD');
    expect(local.requests).toHaveLength(1);
    await sleep(50);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log).toMatchObject({ tier: 'local', status: 200, outcome: 'interrupted' });
  });

  it('death in the same breath as the first content event → that content, then one error event', async () => {
    const { local, cloud, p } = await setup((ctx) => {
      ctx.startStream();
      // destroy() right after write() would discard the write: break once it is on the wire.
      ctx.res.write(`data: ${JSON.stringify(chunk({ content: 'only' }))}\n\n`, () => ctx.destroy());
    });
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    const text = await res.text();
    expect(sseText(text)).toBe('only');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error.code).toBe('stream_interrupted');
    expect(sseData(text)).not.toContain('[DONE]');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
  });

  it('the OpenAI SDK iterating a stream that dies after commit throws', async () => {
    const { cloud, p } = await setup(twoChunksThenDeath);
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const iterate = async (): Promise<void> => {
      for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    };
    await expect(iterate()).rejects.toThrow(/stream|interrupt|upstream/i);
    expect(text).toBe('one two');
    expect(cloud.requests).toHaveLength(0);
  });

  it('a stall after commit longer than idle_ms → one error event, upstream socket closed', async () => {
    const stall: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('partial');
      await ctx.closed;
    };
    const { local, cloud, p } = await setup(stall, { idle_ms: 300 });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
    expect(sseText(text)).toBe('partial');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error.code).toBe('stream_interrupted');
    expect(sseData(text)).not.toContain('[DONE]');
    await socketClosed(local, 0);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log.outcome).toBe('interrupted');
  });
});

describe("stream after commit: the attempt's own limits", () => {
  it('total_ms does not cut a committed stream that keeps trickling: it completes, [DONE] and all', async () => {
    const trickle: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      for (let i = 0; i < 30 && !ctx.isClosed(); i++) {
        ctx.content('.');
        await ctx.wait(50);
      }
      ctx.finish();
      ctx.done();
    };
    const { local, cloud, p } = await setup(trickle, { idle_ms: 1000, total_ms: 500 });
    const started = performance.now();
    const res = await chat(p, { stream: true });
    const text = await res.text();
    // Thirty waits of at least 50 ms: three times total_ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1450);
    expect(sseText(text)).toBe('.'.repeat(30));
    expect(errorEvents(text)).toHaveLength(0);
    expect(sseData(text).at(-1)).toBe('[DONE]');
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(0);
    expect((await requestLog(p)).outcome).toBe('ok');
  });

  it('a client that stops reading for longer than idle_ms is not an upstream stall', async () => {
    const piece = 'x'.repeat(2048);
    const count = 4000; // ~8 MB: more than the socket buffers hold
    const big: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      for (let i = 0; i < count; i++) ctx.content(piece);
      ctx.finish();
      ctx.done();
    };
    const { cloud, p } = await setup(big, { idle_ms: 300 });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = request(`${p.origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      r.on('error', reject);
      r.end(JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    });
    expect(res.statusCode).toBe(200);
    res.pause();
    await sleep(600);
    res.setEncoding('utf8');
    let text = '';
    for await (const part of res) text += part;
    expect(errorEvents(text)).toHaveLength(0);
    expect(sseText(text).length).toBe(piece.length * count);
    expect(sseData(text).at(-1)).toBe('[DONE]');
    expect(cloud.requests).toHaveLength(0);
  });
});

describe('stream after commit: malformed events and [DONE]', () => {
  it.each([
    ['in its own write', false],
    ['in one write with good events', true],
  ])('drops a malformed event (%s), goes on, counts it in metrics and the request log', async (_label, coalesced) => {
    const { p } = await setup(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('A');
      await ctx.wait(10);
      const ev = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify(chunk(delta, finish))}\n\n`;
      if (coalesced) {
        ctx.raw(`${ev({ content: 'B' })}data: {not json\n\n${ev({ content: 'C' })}`);
      } else {
        ctx.raw(ev({ content: 'B' }));
        await ctx.wait(10);
        ctx.raw('data: {not json\n\n');
        await ctx.wait(10);
        ctx.raw(ev({ content: 'C' }));
      }
      ctx.finish();
      ctx.done();
    });
    const before = metric((await fetchMetrics(p)).samples, 'llm_streaming_chunk_errors_total', { route: 'chat', tier: 'local' }) ?? 0;
    const res = await chat(p, { stream: true });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(sseText(text)).toBe('ABC');
    expect(text).not.toContain('{not json');
    expect(errorEvents(text)).toHaveLength(0);
    expect(sseData(text).at(-1)).toBe('[DONE]');
    const log = await requestLog(p);
    expect(log.chunk_errors).toBe(1);
    expect(log.outcome).toBe('ok');
    const after = metric((await fetchMetrics(p)).samples, 'llm_streaming_chunk_errors_total', { route: 'chat', tier: 'local' });
    expect(after).toBe(before + 1);
  });

  it('adds [DONE] when the upstream ends cleanly after a finish_reason without one', async () => {
    const { p } = await setup((ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('done-less');
      ctx.finish();
      ctx.res.end();
    });
    const res = await chat(p, { stream: true });
    const text = await res.text();
    expect(sseText(text)).toBe('done-less');
    const data = sseData(text);
    expect(data.at(-1)).toBe('[DONE]');
    expect(data.filter((d) => d === '[DONE]')).toHaveLength(1);
    expect(errorEvents(text)).toHaveLength(0);
    const log = await requestLog(p);
    expect(log.outcome).toBe('ok');
  });

  it('sends an error event, not [DONE], when the upstream ends with neither finish nor [DONE]', async () => {
    const { cloud, p } = await setup((ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('cut');
      ctx.res.end();
    });
    const res = await chat(p, { stream: true });
    const text = await res.text();
    expect(sseText(text)).toBe('cut');
    expect(sseData(text)).not.toContain('[DONE]');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error.code).toBe('stream_interrupted');
    expect(cloud.requests).toHaveLength(0);
  });
});

describe('stream: usage', () => {
  it('hides the usage-only chunk from a client that did not ask, but always asks the upstream for it', async () => {
    const { local, p } = await setup(healthyStream(['a', 'b', 'c']));
    const res = await chat(p, { stream: true });
    const text = await res.text();
    expect(sseText(text)).toBe('abc');
    expect(usageOnlyChunks(text)).toHaveLength(0);
    expect(text).not.toContain('prompt_tokens');
    expect(sseData(text).at(-1)).toBe('[DONE]');
    expect(local.requests[0].body.stream_options).toEqual({ include_usage: true });
    // Accounting still sees it.
    const log = await requestLog(p);
    expect(log.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3 });
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'prompt' })).toBe(7);
    expect(metric(metrics, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'completion' })).toBe(3);
  });

  it('relays the usage chunk to a client that asked for it, and accounts it', async () => {
    const { local, p } = await setup(healthyStream(['a', 'b']));
    const res = await chat(p, { stream: true, stream_options: { include_usage: true } });
    const text = await res.text();
    expect(sseText(text)).toBe('ab');
    const usage = usageOnlyChunks(text) as Array<{ usage: Record<string, number> }>;
    expect(usage).toHaveLength(1);
    expect(usage[0].usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 2 });
    expect(local.requests[0].body.stream_options).toEqual({ include_usage: true });
    const log = await requestLog(p);
    expect(log.usage).toEqual({ prompt_tokens: 7, completion_tokens: 2 });
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'prompt' })).toBe(7);
    expect(metric(metrics, 'llm_tokens_total', { route: 'chat', tier: 'local', kind: 'completion' })).toBe(2);
  });
});

describe('stream: client abort after commit', () => {
  it('closes the upstream socket at once when the client aborts mid-stream (well under 500 ms; the upstream itself never ends)', async () => {
    const { local, cloud, p } = await setup(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('first');
      await ctx.closed;
    });
    const ac = new AbortController();
    const res = await chat(p, { stream: true }, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('first');
    const abortedAt = performance.now();
    ac.abort();
    await reader.read().catch(() => undefined);
    const closedAt = await socketClosed(local, 0, 2000);
    // Generous for a loaded machine (118 ms seen there); without the abort the socket stays open until the 2 s wait gives up.
    expect(closedAt - abortedAt).toBeLessThan(500);
    await sleep(50);
    expect(cloud.requests).toHaveLength(0);
    const log = await requestLog(p);
    expect(log.outcome).toBe('client_abort');
    expect(metric((await fetchMetrics(p)).samples, 'llm_active_streams', { route: 'chat', tier: 'local' })).toBe(0);
  });
});

describe('stream: relay', () => {
  it('50 concurrent streams through one proxy each get their own full text (OpenAI SDK)', async () => {
    const local = await h.fake();
    local.always(async (ctx) => {
      const messages = ctx.body.messages as Array<{ content: string }>;
      const marker = messages[0].content;
      ctx.startStream();
      ctx.role();
      ctx.content(`<${marker}>`);
      await ctx.wait(5 + (ctx.index % 7) * 3);
      ctx.content(` middle of ${marker}`);
      await ctx.wait(5);
      ctx.content(` </${marker}>`);
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const one = async (i: number): Promise<string> => {
      const stream = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: `req-${i}` }], stream: true });
      let text = '';
      for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
      return text;
    };
    const texts = await Promise.all(Array.from({ length: 50 }, (_, i) => one(i)));
    texts.forEach((text, i) => expect(text).toBe(`<req-${i}> middle of req-${i} </req-${i}>`));
    expect(local.requests).toHaveLength(50);
    expect(new Set(local.requests.map((r) => r.body.model))).toEqual(new Set(['local-model']));
    await waitFor(() => p.logs.filter((l) => l.event === 'request').length === 50, 3000, '50 request log lines');
    const metrics = (await fetchMetrics(p)).samples;
    expect(metric(metrics, 'llm_requests_total', { route: 'chat', tier: 'local', outcome: 'ok' })).toBe(50);
    expect(metric(metrics, 'llm_active_streams', { route: 'chat', tier: 'local' })).toBe(0);
  });

  it('20 concurrent streams that all fail over each get their own text from tier 2', async () => {
    const local = await h.fake();
    const cloud = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', content: '' }));
      await ctx.closed;
    });
    cloud.always(async (ctx) => {
      const marker = (ctx.body.messages as Array<{ content: string }>)[0].content;
      ctx.startStream();
      ctx.role();
      ctx.content(`cloud:${marker}`);
      ctx.finish();
      ctx.done();
    });
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, timeouts: { ttft_ms: 200 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const res = await chat(p, { stream: true, messages: [{ role: 'user', content: `m${i}` }] });
        return { tier: res.headers.get('x-llm-route-tier'), text: sseText(await res.text()) };
      }),
    );
    results.forEach((r, i) => expect(r).toEqual({ tier: 'cloud', text: `cloud:m${i}` }));
    expect(local.requests).toHaveLength(20);
    expect(cloud.requests).toHaveLength(20);
    for (let i = 0; i < 20; i++) await socketClosed(local, i);
  });

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
  ])('commits on a tool-call delta and relays a healthy stream byte for byte (%s line ends)', async (_label, eol) => {
    // Odd but valid SSE: no space after "data:", unusual key order and spacing, a comment
    // after commit, an event split across two writes. Any re-serialisation would show.
    const events = [
      'data:{"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}\n\n',
      'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"city\\":"}}]}, "index": 0, "finish_reason": null}], "id": "chatcmpl-t", "object": "chat.completion.chunk", "created": 1, "model": "m"}\n\n',
      ': keep-alive\n\n',
      'data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \\"Paris\\"}"}}]},"finish_reason":null}]}\n\n',
      'data: {"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n',
      'data: [DONE]\n\n',
    ].map((e) => e.replaceAll('\n', eol));
    const upstreamBytes = events.join('');
    const local = await h.fake();
    local.always(async (ctx) => {
      ctx.startStream();
      ctx.raw(events[0]);
      await ctx.wait(10);
      ctx.raw(events[1].slice(0, 40));
      await ctx.wait(10);
      ctx.raw(events[1].slice(40));
      for (const e of events.slice(2, -1)) {
        await ctx.wait(5);
        ctx.raw(e);
      }
      ctx.raw(events.at(-1) as string);
      ctx.res.end();
    });
    const p = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await chat(p, {
      stream: true,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    const clientBytes = Buffer.from(await res.arrayBuffer());
    expect(clientBytes.toString('utf8')).toBe(upstreamBytes);
    expect(clientBytes.equals(Buffer.from(upstreamBytes))).toBe(true);
    expect(local.requests[0].body.tools).toHaveLength(1);
  });
});
