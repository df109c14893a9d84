import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { anthropicText, anthropicToolUse, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { chunk, completion, healthyStream } from '../../helpers/fake-upstream.js';
import { logLine, readAll, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';
import { ResponsesScript, responsesTextStream } from '../../helpers/responses-upstream.js';
import { sseEvents } from '../../helpers/proxy.js';

const h = useHarness();

function openai(proxy: RunningProxy): OpenAI {
  return new OpenAI({ baseURL: proxy.baseURL, apiKey: 'client-key', maxRetries: 0 });
}

const SHELL_TOOL = {
  type: 'function' as const,
  name: 'shell',
  description: 'Runs a command',
  parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } }, required: ['command'] },
  strict: false,
};

describe('Responses in, Chat Completions tier out (translated)', () => {
  it('streams to the real OpenAI SDK: items with consistent indices, function calls with call ids, usage in response.completed', async () => {
    const upstream = await h.fake();
    upstream.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.event(chunk({ reasoning_content: 'thinking...' }));
      ctx.content('I will run ');
      ctx.content('ls.');
      ctx.event(chunk({ tool_calls: [{ index: 0, id: 'call_ls', type: 'function', function: { name: 'shell', arguments: '{"command":' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '["ls"]}' } }] }));
      ctx.finish('tool_calls');
      ctx.event({
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49, prompt_tokens_details: { cached_tokens: 32 } },
      });
      ctx.done();
    });
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const stream = openai(proxy).responses.stream({ model: 'chat', instructions: 'You are a coding agent.', input: 'list files', tools: [SHELL_TOOL] });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const response = await stream.finalResponse();
    expect(deltas.join('')).toBe('I will run ls.');
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(response.output_text).toBe('I will run ls.');
    const call = response.output[2] as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).toMatchObject({ type: 'function_call', call_id: 'call_ls', name: 'shell', arguments: '{"command":["ls"]}', status: 'completed' });
    expect(response.usage).toMatchObject({ input_tokens: 40, output_tokens: 9, input_tokens_details: { cached_tokens: 32 } });
    const sent = upstream.requests[0].body;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'list files' },
    ]);
    expect(sent.tools).toEqual([
      { type: 'function', function: { name: 'shell', description: 'Runs a command', parameters: SHELL_TOOL.parameters, strict: false } },
    ]);
    const line = await logLine(proxy, proxy.logs.find((l) => l.event === 'request')?.id as string);
    expect(line.protocol).toBe('responses');
  });

  it('sends a multi-turn input with function_call and function_call_output items as tool calls and results with the same ids', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('done: a.txt')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const response = await openai(proxy).responses.create({
      model: 'chat',
      tools: [SHELL_TOOL],
      max_output_tokens: 500,
      input: [
        { role: 'developer', content: 'be terse' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'need ls' }] },
        { type: 'function_call', call_id: 'call_ls', name: 'shell', arguments: '{"command":["ls"]}' },
        { type: 'function_call_output', call_id: 'call_ls', output: 'a.txt' },
      ],
    });
    expect(response.output_text).toBe('done: a.txt');
    expect(response.status).toBe('completed');
    expect(response.usage).toMatchObject({ input_tokens: 5, output_tokens: 3 });
    expect(upstream.requests[0].body).toMatchObject({
      max_tokens: 500,
      messages: [
        { role: 'system', content: 'be terse' },
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_ls', type: 'function', function: { name: 'shell', arguments: '{"command":["ls"]}' } }] },
        { role: 'tool', tool_call_id: 'call_ls', content: 'a.txt' },
      ],
    });
  });

  it('ends a broken stream with an error event (code stream_interrupted) and no response.completed', async () => {
    const upstream = await h.fake();
    upstream.always(async (ctx) => {
      ctx.startStream();
      ctx.content('half');
      await ctx.wait(20);
      ctx.destroy();
    });
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const res = await fetch(`${proxy.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', input: 'hi', stream: true }),
    });
    const { text } = await readAll(res);
    const events = sseEvents(text) as Array<{ type: string; sequence_number: number; code?: string }>;
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
    ]);
    expect(events.at(-1)).toMatchObject({ code: 'stream_interrupted' });
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(text).toContain('event: error\n');
  });

  it('skips a translated tier for previous_response_id (unsupported) and relays it to a tier that serves Responses itself', async () => {
    const chatOnly = await h.fake();
    const native = await h.fake();
    native.always(responsesTextStream(['kept', ' state']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: chatOnly.url },
        { name: 'openai', url: native.url, provider: { passthrough: ['responses'] } },
      ],
    });
    const stream = openai(proxy).responses.stream({ model: 'chat', input: 'and then?', previous_response_id: 'resp_prev' });
    const response = await stream.finalResponse();
    expect(response.output_text).toBe('kept state');
    expect(chatOnly.requests).toHaveLength(0);
    expect(native.requests[0].body).toMatchObject({ previous_response_id: 'resp_prev', model: 'openai-model' });
  });
});

describe('Responses in, Responses passthrough tier out (relayed)', () => {
  it('relays the events unchanged and commits only at the first delta: a tier stalling after response.created fails over unseen', async () => {
    const stalled = await h.fake();
    stalled.always(async (ctx) => {
      const script = new ResponsesScript(ctx, 'resp_FROM_STALLED_TIER');
      script.start();
      await ctx.closed;
    });
    const native = await h.fake();
    native.always(responsesTextStream(['Hi', ' there']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'first', url: stalled.url, provider: { passthrough: ['responses'] }, timeouts: { ttft_ms: 300 } },
        { name: 'second', url: native.url, provider: { passthrough: ['responses'] } },
      ],
    });
    const res = await fetch(`${proxy.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', input: 'hi', stream: true }),
    });
    expect(res.headers.get('x-llm-route-tier')).toBe('second');
    const { text } = await readAll(res);
    expect(text).not.toContain('resp_FROM_STALLED_TIER');
    expect(text.match(/event: response\.created/g)).toHaveLength(1);
    const events = sseEvents(text) as Array<{ type: string; response?: { id: string; usage: unknown } }>;
    expect(events.at(-1)?.type).toBe('response.completed');
    expect(native.requests[0].headers.authorization).toBeUndefined();
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect(line.usage).toEqual({ prompt_tokens: 30, completion_tokens: 6, cached_tokens: 10 });
  });
});

describe('Responses in, anthropic tier out (translated)', () => {
  it('maps text and a tool call from Anthropic events into Responses items', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => {
      startAnthropicStream(ctx, { input_tokens: 50, output_tokens: 1 });
      anthropicText(ctx, 0, ['Running it.']);
      anthropicToolUse(ctx, 1, 'toolu_sh', 'shell', ['{"command":["pwd"]}']);
      endAnthropicStream(ctx, 'tool_use', 17);
    });
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic' }] });
    const response = await openai(proxy)
      .responses.stream({ model: 'chat', input: 'where am I?', tools: [SHELL_TOOL] })
      .finalResponse();
    expect(response.output_text).toBe('Running it.');
    expect(response.output[1]).toMatchObject({ type: 'function_call', call_id: 'toolu_sh', name: 'shell', arguments: '{"command":["pwd"]}' });
    expect(response.usage).toMatchObject({ input_tokens: 50, output_tokens: 17 });
    expect(upstream.requests[0].body).toMatchObject({ max_tokens: 4096, tools: [{ name: 'shell', input_schema: SHELL_TOOL.parameters }] });
  });
});

describe('a provider with passthrough: [responses, messages]', () => {
  it('gets each protocol on its own path: chat as chat, Responses and Messages relayed', async () => {
    const upstream = await h.fake();
    upstream.always(healthyStream(['plain', ' chat']));
    const proxy = await h.proxy({ tiers: [{ name: 'openai', url: upstream.url, provider: { passthrough: ['responses', 'messages'] } }] });
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect((await readAll(res)).text).toContain('"content":" chat"');
    expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/chat/completions']);

    upstream.always(responsesTextStream(['native']));
    const response = await openai(proxy).responses.stream({ model: 'chat', input: 'hi' }).finalResponse();
    expect(response.output_text).toBe('native');
    upstream.always((ctx) =>
      ctx.json(200, {
        id: 'msg_x',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [{ type: 'text', text: 'as messages' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    );
    const message = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(((await message.json()) as { content: unknown }).content).toEqual([{ type: 'text', text: 'as messages' }]);
    expect(upstream.requests.map((r) => r.url)).toEqual(['/v1/chat/completions', '/v1/responses', '/v1/messages']);
    expect(upstream.requests[2].headers['anthropic-version']).toBe('2023-06-01');
  });
});
