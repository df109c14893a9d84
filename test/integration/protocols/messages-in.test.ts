import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { chunk, completion, healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, logLine, metric, readAll, useHarness } from '../../helpers/harness.js';
import {
  anthropicError,
  anthropicEvent,
  anthropicMessage,
  anthropicText,
  anthropicTextStream,
  anthropicToolUse,
  endAnthropicStream,
  startAnthropicStream,
} from '../../helpers/anthropic-upstream.js';
import type { RunningProxy } from '../../helpers/proxy.js';

const h = useHarness();

function anthropicClient(proxy: RunningProxy, apiKey = 'client-key-never-forwarded'): Anthropic {
  return new Anthropic({ baseURL: proxy.origin, apiKey, maxRetries: 0 });
}

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('Anthropic Messages in, Chat Completions tier out (translated)', () => {
  it('streams text to the real Anthropic SDK with usage from the trailing usage chunk', async () => {
    const upstream = await h.fake();
    upstream.always(healthyStream(['Hel', 'lo', '!']));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const stream = anthropicClient(proxy).messages.stream({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const message = await stream.finalMessage();
    expect(texts.join('')).toBe('Hello!');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello!' }]);
    expect(message.stop_reason).toBe('end_turn');
    // healthyStream reports usage 7 prompt / 3 completion after the finish chunk (claude-code-router #1234 lost it).
    expect(message.usage.input_tokens).toBe(7);
    expect(message.usage.output_tokens).toBe(3);
    const sent = upstream.requests[0].body;
    expect(sent.model).toBe('local-model');
    expect(sent.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(sent.max_tokens).toBe(100); // a loopback server gets max_tokens
    expect(sent.stream_options).toEqual({ include_usage: true });
    expect(upstream.requests[0].headers.authorization).toBeUndefined();
    expect(upstream.requests[0].headers['x-api-key']).toBeUndefined();
    const line = await logLine(proxy, (await waitForId(proxy)) as string);
    expect(line.protocol).toBe('messages');
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_requests_total', { route: 'chat', tier: 'local', outcome: 'ok', protocol: 'messages' })).toBe(1);
    expect(metric(samples, 'llm_requests_total', { protocol: 'chat' })).toBeUndefined();
    expect(line.usage).toEqual({ prompt_tokens: 7, completion_tokens: 3 });
  });

  it('answers a non-streaming request with an Anthropic message', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('whole answer', { prompt_tokens: 11, completion_tokens: 2 })));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const message = await anthropicClient(proxy).messages.create({
      model: 'chat',
      max_tokens: 50,
      system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.content).toEqual([{ type: 'text', text: 'whole answer' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 11, output_tokens: 2 });
    expect(upstream.requests[0].body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('translates tools, parallel tool calls with streamed arguments, and tool results with the same ids', async () => {
    const upstream = await h.fake();
    upstream.next(async (ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', content: null }));
      ctx.event(chunk({ tool_calls: [{ index: 0, id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 1, id: 'call_rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } }] }));
      ctx.finish('tool_calls');
      ctx.usage(30, 12);
      ctx.done();
    });
    upstream.next(healthyStream(['Sunny', ' both']));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const client = anthropicClient(proxy);
    const first = await client.messages
      .stream({ model: 'chat', max_tokens: 200, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'weather in Paris and Rome?' }] })
      .finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_rome', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    const sentTools = upstream.requests[0].body.tools;
    expect(sentTools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: WEATHER_TOOL.input_schema } },
    ]);

    const second = await client.messages
      .stream({
        model: 'chat',
        max_tokens: 200,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'weather in Paris and Rome?' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'call_paris', content: 'sunny, 24C' },
              { type: 'tool_result', tool_use_id: 'call_rome', content: [{ type: 'text', text: 'sunny, 27C' }] },
            ],
          },
        ],
      })
      .finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'Sunny both' }]);
    // One tool message per tool_use, each with the id the model gave (LiteLLM #39144, #16711).
    expect(upstream.requests[1].body.messages).toEqual([
      { role: 'user', content: 'weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_rome', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_paris', content: 'sunny, 24C' },
      { role: 'tool', tool_call_id: 'call_rome', content: 'sunny, 27C' },
    ]);
  });

  it('ends a broken stream with an error event that the SDK raises, and no message_stop', async () => {
    const upstream = await h.fake();
    upstream.always(async (ctx) => {
      ctx.startStream();
      ctx.content('partial ');
      await ctx.wait(20);
      ctx.destroy();
    });
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const raw = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'chat', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const { text } = await readAll(raw);
    expect(text).toContain('event: message_start');
    expect(text).toContain('"text":"partial "');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"llm-route: upstream connection broke/);
    expect(text).not.toContain('message_stop');
    await expect(
      anthropicClient(proxy)
        .messages.stream({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .finalMessage(),
    ).rejects.toThrow(/upstream connection broke/);
  });
});

describe('Anthropic Messages in, anthropic tier out (relayed)', () => {
  it('relays the upstream events byte for byte, with the provider key and the client version and betas', async () => {
    const upstream = await h.fake();
    upstream.always(
      anthropicTextStream(['Bonjour', ' !'], {
        usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 5, output_tokens: 1 },
        outputTokens: 4,
      }),
    );
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic', api_key: 'sk-ant-provider-key' }] });
    const res = await fetch(`${proxy.origin}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'client-key',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14',
      },
      body: JSON.stringify({
        model: 'chat',
        max_tokens: 10,
        stream: true,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('claude');
    const { text } = await readAll(res);
    // Exactly what the fake sent, from message_start to message_stop.
    expect(text.startsWith('event: message_start\ndata: {"type":"message_start"')).toBe(true);
    expect(text).toContain('event: ping\ndata: {"type":"ping"}\n\n');
    expect(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true);
    const seen = upstream.requests[0];
    expect(seen.headers['x-api-key']).toBe('sk-ant-provider-key');
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen.headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14');
    expect(seen.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);
    expect(seen.body.model).toBe('claude-model');
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    // Anthropic's input excludes cache reads and writes; llm-route's prompt counts them once.
    expect(line.usage).toEqual({ prompt_tokens: 125, completion_tokens: 4, cached_tokens: 100, cache_creation_tokens: 5 });
  });

  it('adds max_tokens from the tier when the client sent none, and cuts a larger ask to it', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic', extra: { max_tokens: 777 } }] });
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(upstream.requests[0].body.max_tokens).toBe(777);
    expect(((await res.json()) as { content: unknown }).content).toEqual([{ type: 'text', text: 'ok' }]);
    // And what a request may ask of the tier at most, relayed or not.
    await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', max_tokens: 128000, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(upstream.requests[1].body.max_tokens).toBe(777);
  });

  it('fails over from an anthropic tier that stalls after message_start to an openai tier: the client sees one coherent stream', async () => {
    const stalled = await h.fake();
    stalled.always(async (ctx) => {
      startAnthropicStream(ctx, { input_tokens: 9, output_tokens: 1 }, 'msg_FROM_STALLED_TIER');
      anthropicEvent(ctx, 'ping', {});
      await ctx.closed;
    });
    const cloud = await h.fake();
    cloud.always(healthyStream(['from', ' cloud']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'claude', url: `http://127.0.0.1:${stalled.port}`, type: 'anthropic', timeouts: { ttft_ms: 300 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    const { text } = await readAll(res);
    expect(text.match(/event: message_start/g)).toHaveLength(1);
    expect(text).not.toContain('msg_FROM_STALLED_TIER');
    const final = await anthropicClient(proxy)
      .messages.stream({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'from cloud' }]);
  });

  it('passes an upstream payload error through as it came, and a 529 fails over', async () => {
    const upstream = await h.fake();
    upstream.next((ctx) => anthropicError(ctx, 400, 'invalid_request_error', 'messages: roles must alternate'));
    upstream.next(
      (ctx) => anthropicError(ctx, 529, 'overloaded_error', 'Overloaded'),
      (ctx) => anthropicError(ctx, 529, 'overloaded_error', 'Overloaded'),
    );
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('cloud answered')));
    const proxy = await h.proxy({
      tiers: [
        { name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic', retry: { attempts: 2, base_ms: 1, max_ms: 5 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const client = anthropicClient(proxy);
    const bad = await client.messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('roles must alternate');
    expect(cloud.requests).toHaveLength(0);
    const good = await client.messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(good.content).toEqual([{ type: 'text', text: 'cloud answered' }]);
    expect(upstream.requests).toHaveLength(3); // one 400, then a 529 retried once
  });
});

describe('route aliases', () => {
  it("route Claude Code's own model names to the route whose alias matches", async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('aliased')));
    const proxy = await h.proxy({ route: 'code', aliases: ['claude-*'], tiers: [{ name: 'local', url: upstream.url }] });
    const message = await anthropicClient(proxy).messages.create({ model: 'claude-opus-5-5', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'aliased' }]);
    const line = proxy.logs.find((l) => l.event === 'request');
    expect(line?.route).toBe('code');
    const unknown = await anthropicClient(proxy)
      .messages.create({ model: 'gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
  });
});

describe('Anthropic-shaped errors and endpoints', () => {
  it('answers an unknown route with not_found_error, bad input with invalid_request_error, a wrong key with authentication_error', async () => {
    const upstream = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }], server: { auth_token: 'route-token' } });
    const client = anthropicClient(proxy, 'route-token');
    const missing = await client.messages.create({ model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'route-token' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 42 }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/content/);
    const denied = await anthropicClient(proxy, 'wrong')
      .messages.create({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(upstream.requests).toHaveLength(0);
  });

  it('a max_tokens that is not a positive integer: 400 invalid_request_error saying which fault it is', async () => {
    const upstream = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const said = async (maxTokens: unknown): Promise<string> => {
      const res = await fetch(`${proxy.origin}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', max_tokens: maxTokens, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      return body.error.message;
    };
    expect(await said(-1)).toMatch(/"max_tokens" must be at least 1$/);
    expect(await said(0)).toMatch(/"max_tokens" must be at least 1$/);
    expect(await said(2.5)).toMatch(/"max_tokens" must be an integer$/);
    expect(await said('100')).toMatch(/"max_tokens" must be a number$/);
    // The SDK reads it as a BadRequestError with the same words.
    const bad = await anthropicClient(proxy)
      .messages.create({ model: 'chat', max_tokens: -1, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect((bad as InstanceType<typeof Anthropic.BadRequestError>).message).toMatch(/must be at least 1/);
    expect(upstream.requests).toHaveLength(0);
  });

  it("lists the routes in Anthropic's shape when the client sends anthropic-version", async () => {
    const upstream = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const page = await anthropicClient(proxy).models.list();
    expect(page.data.map((m) => m.id)).toEqual(['chat']);
    expect(page.data[0].type).toBe('model');
  });

  it('counts tokens at an anthropic tier, and locally (marked estimated) when no tier speaks Messages', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, { input_tokens: 42 }));
    const withClaude = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic' }] });
    const counted = await anthropicClient(withClaude).messages.countTokens({ model: 'chat', messages: [{ role: 'user', content: 'hello there' }] });
    expect(counted.input_tokens).toBe(42);
    expect(upstream.requests[0].body.model).toBe('claude-model');

    const local = await h.fake();
    const withoutClaude = await h.proxy({ tiers: [{ name: 'local', url: local.url }] });
    const res = await fetch(`${withoutClaude.origin}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    expect(res.headers.get('x-llm-route-estimated')).toBe('true');
    const body = (await res.json()) as { input_tokens: number };
    expect(body.input_tokens).toBeGreaterThan(0);
    expect(local.requests).toHaveLength(0);
  });
});

describe('Chat Completions in, anthropic tier out (translated)', () => {
  it("streams to the OpenAI SDK with tool calls, stop reasons and cached usage in OpenAI's convention", async () => {
    const { default: OpenAI } = await import('openai');
    const upstream = await h.fake();
    upstream.always((ctx) => {
      startAnthropicStream(ctx, { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 });
      anthropicText(ctx, 0, ['Let me check.']);
      anthropicToolUse(ctx, 1, 'toolu_01A', 'get_weather', ['{"city": ', '"Oslo"}']);
      endAnthropicStream(ctx, 'tool_use', 21);
    });
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic', api_key: 'sk-ant-k' }] });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: 'chat',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'weather in Oslo' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL.input_schema } }],
    });
    let text = '';
    const args: string[] = [];
    let finish: string | null = null;
    let usage: unknown;
    let id = '';
    for await (const part of stream) {
      const choice = part.choices[0];
      if (part.usage) usage = part.usage;
      if (!choice) continue;
      text += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        if (call.id) id = call.id;
        args.push(call.function?.arguments ?? '');
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(text).toBe('Let me check.');
    expect(id).toBe('toolu_01A');
    expect(JSON.parse(args.join(''))).toEqual({ city: 'Oslo' });
    expect(finish).toBe('tool_calls');
    expect(usage).toEqual({ prompt_tokens: 100, completion_tokens: 21, total_tokens: 121, prompt_tokens_details: { cached_tokens: 90 } });
    const sent = upstream.requests[0];
    expect(sent.headers['x-api-key']).toBe('sk-ant-k');
    expect(sent.body).toMatchObject({
      model: 'claude-model',
      max_tokens: 300,
      system: 'sys',
      stream: true,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'weather in Oslo' }] }],
    });
    expect(sent.body.tools).toEqual([{ name: 'get_weather', input_schema: WEATHER_TOOL.input_schema }]);
  });

  it('skips an anthropic tier for n > 1 (outcome unsupported, no health penalty) and answers 400 when no tier can carry it', async () => {
    const upstream = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic' }] });
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', n: 2, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string; attempts: Array<{ outcome: string }> } };
    expect(body.error.code).toBe('unsupported_request');
    expect(body.error.message).toMatch(/n > 1/);
    expect(body.error.attempts.map((a) => a.outcome)).toEqual(['unsupported']);
    expect(upstream.requests).toHaveLength(0);
    const health = (await (await fetch(`${proxy.origin}/healthz`)).json()) as { routes: { chat: { tiers: Array<{ state: string; failures: number }> } } };
    expect(health.routes.chat.tiers[0]).toMatchObject({ state: 'healthy', failures: 0 });
  });

  it.each(['anthropic', 'ollama'] as const)(
    'tool-call arguments nested 200,000 deep (a JSON string the body limit cannot see): %s tier skipped as unsupported, a 400, never a 500',
    async (type) => {
      const upstream = await h.fake();
      const proxy = await h.proxy({ tiers: [{ name: 'far', url: `http://127.0.0.1:${upstream.port}`, type }] });
      const deep = `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`;
      const messages = [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: deep } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'done' },
      ];
      const res = await fetch(`${proxy.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('unsupported_request');
      expect(body.error.message).toMatch(/call_1 nest deeper than 1000 levels/);
      expect(upstream.requests).toHaveLength(0);
    },
  );
});

async function waitForId(proxy: RunningProxy): Promise<unknown> {
  for (let i = 0; i < 300; i++) {
    const line = proxy.logs.find((l) => l.event === 'request');
    if (line) return line.id;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no request log line');
}
