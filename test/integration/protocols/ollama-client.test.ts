import { Ollama } from 'ollama';
import { describe, expect, it } from 'vitest';
import {
  anthropicEvent,
  anthropicMessage,
  anthropicText,
  anthropicToolUse,
  endAnthropicStream,
  startAnthropicStream,
} from '../../helpers/anthropic-upstream.js';
import { chunk, completion, healthyStream, type ScriptContext } from '../../helpers/fake-upstream.js';
import { logLine, readAll, requestLog, useHarness } from '../../helpers/harness.js';
import { ollamaDone, ollamaGenerateStream, ollamaLine, ollamaLineText, ollamaWhole, startOllamaStream } from '../../helpers/ollama-upstream.js';
import type { TierSpec } from '../../helpers/proxy.js';
import { HERMES } from '../../helpers/tool-text-forms.js';
import { CHAT_TOOLS, ollamaContent, piecesOf, sseContent } from '../../helpers/tool-text-kit.js';

/**
 * Ollama's API in front of tiers, with the real ollama-js client (0.6.4) on the other side:
 * translated to an OpenAI-compatible and an Anthropic tier, relayed to an Ollama tier,
 * failing over invisibly, streamed and whole.
 */
const h = useHarness();

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

async function proxyWith(tiers: TierSpec[], aliases?: string[]) {
  const proxy = await h.proxy({ tiers, aliases });
  return { proxy, ollama: new Ollama({ host: proxy.origin }) };
}

async function openaiTier(name = 'cloud') {
  const fake = await h.fake();
  return { fake, tier: { name, url: fake.url } satisfies TierSpec };
}

/** Every line of an NDJSON answer, parsed. */
function lines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

describe('ollama-js against an OpenAI-compatible tier (translated)', () => {
  it('chat streams line by line and ends with done, done_reason, the counts and durations in nanoseconds', async () => {
    const { fake, tier } = await openaiTier();
    fake.always(healthyStream(['Hel', 'lo']));
    const { proxy, ollama } = await proxyWith([tier]);
    const parts: Array<Record<string, unknown>> = [];
    const stream = await ollama.chat({
      model: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      options: { temperature: 0.2, top_p: 0.9, seed: 7, stop: ['END'], num_predict: 64, num_ctx: 8192 },
      keep_alive: '10m',
    });
    for await (const part of stream) parts.push(part as unknown as Record<string, unknown>);
    expect(parts.map((p) => (p.message as { content: string }).content).join('')).toBe('Hello');
    // Each line names the model that answered (the tier's), not the route.
    expect(parts.slice(0, -1).every((p) => p.done === false && p.model === 'cloud-model' && typeof p.created_at === 'string')).toBe(true);
    const last = parts.at(-1)!;
    expect(Object.keys(last)).toEqual([
      'model',
      'created_at',
      'message',
      'done',
      'done_reason',
      'total_duration',
      'load_duration',
      'prompt_eval_count',
      'prompt_eval_duration',
      'eval_count',
      'eval_duration',
    ]);
    expect(last).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 7, eval_count: 2, message: { role: 'assistant', content: '' } });
    expect(last.total_duration).toBeGreaterThan(0);
    expect(Number.isInteger(last.total_duration)).toBe(true);
    // The options a Chat tier can carry, in its terms; num_ctx and keep_alive are the Ollama server's only.
    expect(fake.requests[0].body).toEqual({
      model: 'cloud-model',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      stop: ['END'],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(await requestLog(proxy)).toMatchObject({
      protocol: 'ollama',
      route: 'chat',
      tier: 'cloud',
      outcome: 'ok',
      usage: { prompt_tokens: 7, completion_tokens: 2 },
    });
  });

  it('chat whole (stream: false) is one object; format (a JSON schema) and think reach the tier as response_format and reasoning_effort', async () => {
    const { fake, tier } = await openaiTier();
    fake.always((ctx) => ctx.json(200, completion('{"ok":true}', { prompt_tokens: 11, completion_tokens: 4 })));
    const { ollama } = await proxyWith([tier]);
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const answer = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'ok?' }], stream: false, format: schema, think: 'high' });
    expect(answer).toMatchObject({
      model: 'cloud-model',
      message: { role: 'assistant', content: '{"ok":true}' },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 11,
      eval_count: 4,
    });
    expect(fake.requests[0].body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'response', schema } },
      reasoning_effort: 'high',
    });
    expect(fake.requests[0].body.stream).toBeUndefined();
  });

  it('tools and images: the image as a data URL, the tool call back as Ollama writes one (arguments an object, done_reason stop)', async () => {
    const { fake, tier } = await openaiTier();
    fake.always((ctx) => {
      ctx.startStream();
      ctx.event(
        chunk({
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        }),
      );
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
      ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }));
      ctx.event(chunk({}, 'tool_calls'));
      ctx.usage(30, 9);
      ctx.done();
    });
    const { ollama } = await proxyWith([tier]);
    const stream = await ollama.chat({
      model: 'chat',
      messages: [{ role: 'user', content: 'weather here?', images: [PIXEL] }],
      tools: [WEATHER],
      stream: true,
    });
    const parts = [];
    for await (const part of stream) parts.push(part);
    const calls = parts.flatMap((p) => p.message.tool_calls ?? []);
    expect(calls).toEqual([{ id: 'call_w1', function: { index: 0, name: 'get_weather', arguments: { city: 'Oslo' } } }]);
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop', eval_count: 9 });
    const sent = fake.requests[0].body as { messages: Array<{ content: unknown }>; tools: unknown[] };
    expect(sent.messages[0].content).toEqual([
      { type: 'text', text: 'weather here?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
    ]);
    expect(sent.tools).toEqual([WEATHER]);

    // The next turn: the call and its result go back (Ollama names the tool, not the call: the result answers it).
    fake.always((ctx) => ctx.json(200, completion('Sunny.')));
    const answer = await ollama.chat({
      model: 'chat',
      stream: false,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'weather here?' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
        { role: 'tool', content: '12°C, sunny', tool_name: 'get_weather' },
      ],
    });
    expect(answer.message.content).toBe('Sunny.');
    expect((fake.requests[1].body as { messages: unknown[] }).messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: '12°C, sunny' },
    ]);
  });

  it('generate streams `response` pieces and answers whole; system, prompt and images become the one user turn', async () => {
    const { fake, tier } = await openaiTier();
    fake.next(healthyStream(['The', ' sky']), (ctx) => ctx.json(200, completion('Blue.')));
    const { ollama } = await proxyWith([tier]);
    const stream = await ollama.generate({ model: 'chat', system: 'Be brief.', prompt: 'Why is the sky blue?', images: [PIXEL], stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.response).join('')).toBe('The sky');
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop', response: '' });
    expect(fake.requests[0].body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Why is the sky blue?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } },
        ],
      },
    ]);
    const whole = await ollama.generate({ model: 'chat', prompt: 'Sky?', stream: false });
    expect(whole).toMatchObject({ model: 'cloud-model', response: 'Blue.', done: true, done_reason: 'stop', prompt_eval_count: 5, eval_count: 3 });
  });
});

describe('ollama-js against an Ollama tier (relayed)', () => {
  async function ollamaTier() {
    const fake = await h.fake();
    return {
      fake,
      tier: {
        name: 'local',
        url: `http://127.0.0.1:${fake.port}`,
        type: 'ollama',
        model: 'qwen2.5:7b',
        extra: { ollama: { num_ctx: 16384 } },
      } satisfies TierSpec,
    };
  }

  it("chat streamed: the tier's lines reach the client byte for byte; only the model was rewritten (and the tier's num_ctx added)", async () => {
    const { fake, tier } = await ollamaTier();
    const upstream: string[] = [];
    fake.always((ctx) => {
      startOllamaStream(ctx);
      for (const content of ['Hel', 'lo']) {
        upstream.push(ollamaLineText({ content }));
        ctx.raw(upstream.at(-1)!);
      }
      const write = ctx.raw;
      const recording = (text: string): void => {
        upstream.push(text);
        write(text);
      };
      ollamaDone({ ...ctx, raw: recording } as ScriptContext, 26, 2);
    });
    const { proxy } = await proxyWith([tier]);
    const body = {
      model: 'chat',
      messages: [{ role: 'user', content: 'hi', images: [PIXEL] }],
      tools: [WEATHER],
      think: true,
      format: 'json',
      options: { temperature: 0 },
    };
    const res = await fetch(`${proxy.origin}/api/chat`, { method: 'POST', body: JSON.stringify(body) });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const { text } = await readAll(res);
    expect(text).toBe(upstream.join(''));
    expect(lines(text).at(-1)).toMatchObject({ model: 'qwen2.5:7b', done: true, done_reason: 'stop' });
    expect(fake.requests[0].url).toBe('/api/chat');
    expect(fake.requests[0].body).toEqual({ ...body, model: 'qwen2.5:7b', options: { temperature: 0, num_ctx: 16384 } });
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect(line).toMatchObject({ protocol: 'ollama', tier: 'local', usage: { prompt_tokens: 26, completion_tokens: 2 } });
  });

  it('chat whole, generate streamed and whole: each on its own path at the tier, the answer as the tier wrote it', async () => {
    const { fake, tier } = await ollamaTier();
    fake.next(
      (ctx) => ctx.json(200, ollamaWhole({ content: 'Hello there' }, 12, 4)),
      ollamaGenerateStream(['The', ' sky']),
      (ctx) => ctx.json(200, { model: 'qwen2.5:7b', created_at: 'x', response: 'Blue.', done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 2 }),
    );
    const { ollama } = await proxyWith([tier]);
    const whole = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: false, options: { num_ctx: 4096 } });
    expect(whole).toMatchObject({ model: 'qwen2.5:7b', message: { content: 'Hello there' }, eval_count: 4 });
    const stream = await ollama.generate({ model: 'chat', prompt: 'Why?', stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.response).join('')).toBe('The sky');
    expect(parts.at(-1)).toMatchObject({ done: true, context: [1, 2, 3], eval_duration: 4232710000 });
    const generated = await ollama.generate({ model: 'chat', prompt: 'Sky?', stream: false });
    expect(generated.response).toBe('Blue.');
    expect(fake.requests.map((r) => r.url)).toEqual(['/api/chat', '/api/generate', '/api/generate']);
    // The client's own num_ctx wins over the tier's.
    expect(fake.requests[0].body.options).toEqual({ num_ctx: 4096 });
    expect(fake.requests[1].body).toMatchObject({ model: 'qwen2.5:7b', prompt: 'Why?', stream: true, options: { num_ctx: 16384 } });
  });
});

describe('ollama-js against an Anthropic tier (translated)', () => {
  it('streams text and a tool call (Claude thinking shown as thinking); whole answers too', async () => {
    const fake = await h.fake();
    fake.next(
      (ctx) => {
        startAnthropicStream(ctx, { input_tokens: 40, output_tokens: 1 });
        anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
        anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Thinking it over.' } });
        anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } });
        anthropicEvent(ctx, 'content_block_stop', { index: 0 });
        anthropicText(ctx, 1, ['Let me ', 'check.']);
        anthropicToolUse(ctx, 2, 'toolu_01A', 'get_weather', ['{"city"', ':"Oslo"}']);
        endAnthropicStream(ctx, 'tool_use', 22);
      },
      (ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'Sunny in Oslo.' }])),
    );
    const { ollama } = await proxyWith([
      { name: 'claude', url: `http://127.0.0.1:${fake.port}`, type: 'anthropic', model: 'claude-sonnet-4-5', api_key: 'sk-ant-test' },
    ]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'weather?' }], tools: [WEATHER], think: true, stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.message.thinking ?? '').join('')).toBe('Thinking it over.');
    expect(parts.map((p) => p.message.content).join('')).toBe('Let me check.');
    expect(parts.flatMap((p) => p.message.tool_calls ?? [])).toEqual([
      { id: 'toolu_01A', function: { index: 0, name: 'get_weather', arguments: { city: 'Oslo' } } },
    ]);
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 40, eval_count: 22 });
    const sent = fake.requests[0].body as Record<string, unknown>;
    expect(fake.requests[0].url).toBe('/v1/messages');
    expect(sent.thinking).toMatchObject({ type: 'enabled' });
    expect(sent.tools).toEqual([{ name: 'get_weather', description: 'The weather in a city', input_schema: WEATHER.function.parameters }]);

    const whole = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'weather?' }], stream: false });
    expect(whole).toMatchObject({ message: { role: 'assistant', content: 'Sunny in Oslo.' }, done: true, prompt_eval_count: 10, eval_count: 5 });
  });
});

describe('failover before the first line is invisible to ollama-js', () => {
  it('a refused first tier, then a 500: the third answers, streamed and whole, and the client sees one clean answer', async () => {
    const broken = await h.fake();
    broken.always((ctx) => ctx.error(500, 'boom'));
    const { fake, tier } = await openaiTier('good');
    fake.next(healthyStream(['fine']), (ctx) => ctx.json(200, completion('fine')));
    const { proxy, ollama } = await proxyWith([
      { name: 'dead', url: 'http://127.0.0.1:1/v1' },
      { name: 'broken', url: broken.url, retry: { attempts: 1 } },
      tier,
    ]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.message.content).join('')).toBe('fine');
    expect(parts.at(-1)!.done).toBe(true);
    const whole = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect(whole.message.content).toBe('fine');
    const logged = proxy.logs.filter((l) => l.event === 'request');
    expect(logged.map((l) => l.tier)).toEqual(['good', 'good']);
    expect((logged[0].attempts as Array<{ tier: string }>).map((a) => a.tier)).toEqual(['dead', 'broken', 'good']);
  });
});

describe('a tool call from an Ollama tier, relayed', () => {
  it('a tool call the Ollama tier streams arrives as the tier wrote it', async () => {
    const fake = await h.fake();
    fake.always((ctx) => {
      startOllamaStream(ctx);
      ollamaLine(ctx, { content: '', tool_calls: [{ id: 'call_abc', function: { index: 0, name: 'get_weather', arguments: { city: 'Oslo' } } }] });
      ollamaDone(ctx, 50, 10);
    });
    const { ollama } = await proxyWith([{ name: 'local', url: `http://127.0.0.1:${fake.port}`, type: 'ollama', model: 'qwen2.5:7b' }]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'weather?' }], tools: [WEATHER], stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.flatMap((p) => p.message.tool_calls ?? [])).toEqual([
      { id: 'call_abc', function: { index: 0, name: 'get_weather', arguments: { city: 'Oslo' } } },
    ]);
  });
});

describe('a whole answer keeps every line of a stream apart', () => {
  it('NDJSON: one object per line, nothing else', async () => {
    const { fake, tier } = await openaiTier();
    fake.always(healthyStream(['a', 'b', 'c']));
    const { proxy } = await proxyWith([tier]);
    const res = await fetch(`${proxy.origin}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }),
    });
    const { text } = await readAll(res);
    expect(text.endsWith('\n')).toBe(true);
    expect(lines(text).map((l) => l.done)).toEqual([false, false, false, true]);
  });
});

describe('tool calls written as text, recovered for ollama-js', () => {
  it('a Hermes <tool_call> an OpenAI-compatible tier writes as text reaches ollama-js as a tool call (streamed and whole)', async () => {
    const { fake, tier } = await openaiTier();
    fake.next(sseContent(piecesOf(HERMES)), (ctx) => ctx.json(200, completion(HERMES)));
    const { proxy, ollama } = await proxyWith([tier]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'list files' }], tools: CHAT_TOOLS, stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.message.content).join('')).toBe('');
    const calls = parts.flatMap((p) => p.message.tool_calls ?? []);
    expect(calls).toEqual([{ id: expect.stringMatching(/^call_/), function: { index: 0, name: 'Bash', arguments: { command: 'ls -la' } } }]);
    expect(await requestLog(proxy)).toMatchObject({ protocol: 'ollama', tool_text: { format: 'hermes', calls: 1, result: 'recovered' } });
    const whole = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'list files' }], tools: CHAT_TOOLS, stream: false });
    expect(whole.message.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), function: { index: 0, name: 'Bash', arguments: { command: 'ls -la' } } }]);
    expect(whole.message.content).toBe('');
  });

  it('an Ollama tier writing the call as text: the relay becomes a rendered stream, the client gets the call', async () => {
    const fake = await h.fake();
    fake.always(ollamaContent(piecesOf(HERMES)));
    const { ollama } = await proxyWith([{ name: 'local', url: `http://127.0.0.1:${fake.port}`, type: 'ollama', model: 'qwen2.5:7b' }]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'list files' }], tools: CHAT_TOOLS, stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.flatMap((p) => p.message.tool_calls ?? []).map((c) => [c.function.name, c.function.arguments])).toEqual([['Bash', { command: 'ls -la' }]]);
    expect(parts.some((p) => p.message.content.includes('<tool_call>'))).toBe(false);
    expect(parts.at(-1)).toMatchObject({ done: true });
  });
});

describe('text, then a call written as text, on a relayed Ollama stream', () => {
  it("the text goes out as the tier's own lines, the call after it as Ollama's tool_calls under the same model", async () => {
    const fake = await h.fake();
    const text = 'Let me look.\n';
    fake.always(ollamaContent([...piecesOf(text, 5), ...piecesOf(HERMES, 6)]));
    const { proxy, ollama } = await proxyWith([{ name: 'local', url: `http://127.0.0.1:${fake.port}`, type: 'ollama', model: 'qwen2.5:7b' }]);
    const stream = await ollama.chat({ model: 'chat', messages: [{ role: 'user', content: 'list files' }], tools: CHAT_TOOLS, stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.map((p) => p.message.content).join('')).toBe(text);
    expect(parts.flatMap((p) => p.message.tool_calls ?? [])).toEqual([
      { id: expect.stringMatching(/^call_/), function: { index: 0, name: 'Bash', arguments: { command: 'ls -la' } } },
    ]);
    // The relayed lines name the tier's model; the rendered ones after the handover go on under it.
    expect(new Set(parts.map((p) => p.model))).toEqual(new Set(['qwen2.5:7b']));
    expect(parts.at(-1)).toMatchObject({ done: true });
    expect(await requestLog(proxy)).toMatchObject({ protocol: 'ollama', tool_text: { format: 'hermes', calls: 1 } });
  });
});
