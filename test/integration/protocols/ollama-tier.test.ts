import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { logLine, readAll, useHarness } from '../../helpers/harness.js';
import { ollamaDone, ollamaLine, ollamaTextStream, ollamaWhole, startOllamaStream } from '../../helpers/ollama-upstream.js';
import { errorEvents, sseText } from '../../helpers/proxy.js';

const h = useHarness();

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

async function ollamaProxy(extraTiers: Parameters<typeof h.proxy>[0] extends infer S ? (S extends { tiers: infer T } ? T : never) : never = []) {
  const ollama = await h.fake();
  const proxy = await h.proxy({
    tiers: [
      {
        name: 'local',
        url: `http://127.0.0.1:${ollama.port}`,
        type: 'ollama',
        model: 'qwen2.5:7b',
        provider: { ollama: { keep_alive: '30m' } },
        extra: { ollama: { num_ctx: 16384 } },
      },
      ...extraTiers,
    ],
  });
  return { ollama, proxy };
}

describe('an ollama tier (native /api/chat, NDJSON)', () => {
  it('streams to a chat client, with keep_alive and num_ctx set, lines split anywhere, usage from its counts', async () => {
    const { ollama, proxy } = await ollamaProxy();
    ollama.always(async (ctx) => {
      startOllamaStream(ctx);
      // One line in three pieces, two lines in one write: the framer must not care.
      const line = JSON.stringify({ model: 'qwen2.5:7b', created_at: 'x', message: { role: 'assistant', content: 'Hel' }, done: false });
      ctx.raw(line.slice(0, 10));
      await ctx.wait(5);
      ctx.raw(line.slice(10, 40));
      await ctx.wait(5);
      ctx.raw(`${line.slice(40)}\n${JSON.stringify({ model: 'qwen2.5:7b', created_at: 'x', message: { role: 'assistant', content: 'lo' }, done: false })}\n`);
      ollamaDone(ctx, 26, 2);
    });
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, max_tokens: 64, temperature: 0.2, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const { text } = await readAll(res);
    expect(sseText(text)).toBe('Hello');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const seen = ollama.requests[0];
    expect(seen.url).toBe('/api/chat');
    expect(seen.body).toEqual({
      model: 'qwen2.5:7b',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      options: { temperature: 0.2, num_predict: 64, num_ctx: 16384 },
      keep_alive: '30m',
    });
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect(line.usage).toEqual({ prompt_tokens: 26, completion_tokens: 2 });
  });

  it('reports a turn that ended in tool calls as tool_calls (Ollama says "stop"), with arguments as JSON text', async () => {
    const { ollama, proxy } = await ollamaProxy();
    ollama.always((ctx) => {
      startOllamaStream(ctx);
      ollamaLine(ctx, {
        content: '',
        tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }, { function: { name: 'get_weather', arguments: { city: 'Bergen' } } }],
      });
      ollamaDone(ctx, 80, 20, 'stop');
    });
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      stream: true,
    });
    const calls: Record<number, { id?: string; name?: string; args: string }> = {};
    let finish: string | null = null;
    for await (const part of answer) {
      for (const call of part.choices[0]?.delta.tool_calls ?? []) {
        const entry = (calls[call.index] ??= { args: '' });
        if (call.id) entry.id = call.id;
        if (call.function?.name) entry.name = call.function.name;
        entry.args += call.function?.arguments ?? '';
      }
      finish = part.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(Object.values(calls).map((c) => [c.name, JSON.parse(c.args)])).toEqual([
      ['get_weather', { city: 'Oslo' }],
      ['get_weather', { city: 'Bergen' }],
    ]);
    expect(new Set(Object.values(calls).map((c) => c.id)).size).toBe(2);
    expect(ollama.requests[0].body.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ]);
  });

  it('answers an Anthropic client without streaming, images going as base64 and tool results with the tool name', async () => {
    const { ollama, proxy } = await ollamaProxy();
    ollama.always((ctx) => ctx.json(200, ollamaWhole({ content: 'a red pixel' }, 30, 4)));
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const message = await client.messages.create({
      model: 'chat',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'look' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }] },
            { type: 'text', text: 'what is it?' },
          ],
        },
      ],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'a red pixel' }]);
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 4 });
    expect(ollama.requests[0].body.stream).toBe(false);
    expect(ollama.requests[0].body.messages).toEqual([
      { role: 'user', content: 'look' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'screenshot', arguments: {} } }] },
      { role: 'tool', tool_name: 'screenshot', content: '', images: [PIXEL] },
      { role: 'user', content: 'what is it?' },
    ]);
  });

  it('skips itself for an image URL (unsupported: no health penalty) and the next tier answers', async () => {
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.json(200, completion('cloud saw it')));
    const { ollama, proxy } = await ollamaProxy([{ name: 'cloud', url: cloud.url }]);
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
      }),
    });
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(ollama.requests).toHaveLength(0);
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect((line.attempts as Array<{ tier: string; outcome: string; message: string }>)[0]).toMatchObject({
      tier: 'local',
      outcome: 'unsupported',
      message: 'Ollama takes images as base64 data, not URLs',
    });
    const health = (await (await fetch(`${proxy.origin}/healthz`)).json()) as { routes: { chat: { tiers: Array<{ name: string; failures: number }> } } };
    expect(health.routes.chat.tiers[0]).toMatchObject({ name: 'local', failures: 0 });
  });

  it('fails over on a model that is not pulled (404) and on an error line before content; ends a stream with the error event after content', async () => {
    const cloud = await h.fake();
    cloud.always(healthyStream(['from', ' cloud']));
    const { ollama, proxy } = await ollamaProxy([{ name: 'cloud', url: cloud.url }]);
    ollama.next((ctx) => ctx.json(404, { error: 'model "qwen2.5:7b" not found, try pulling it first' }));
    ollama.next((ctx) => {
      startOllamaStream(ctx);
      ctx.raw('{"error":"an error was encountered while running the model: unexpected EOF"}\n');
      ctx.res.end();
    });
    ollama.next(async (ctx) => {
      startOllamaStream(ctx);
      ollamaLine(ctx, { content: 'partial' });
      await ctx.wait(10);
      ctx.raw('{"error":"an error was encountered while running the model: CUDA error"}\n');
      ctx.res.end();
    });
    const send = () =>
      fetch(`${proxy.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
    for (let i = 0; i < 2; i++) {
      const res = await send();
      expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
      expect(sseText((await readAll(res)).text)).toBe('from cloud');
    }
    const broken = await send();
    expect(broken.headers.get('x-llm-route-tier')).toBe('local');
    const { text } = await readAll(broken);
    expect(sseText(text)).toBe('partial');
    const errors = errorEvents(text);
    expect(errors).toHaveLength(1);
    expect(errors[0].error).toMatchObject({ code: 'stream_interrupted' });
    expect(errors[0].error.message).toContain('CUDA error');
    expect(text).not.toContain('[DONE]');
  });

  it('an answer that is only its done line is an (empty) answer, not an empty stream to fail over from', async () => {
    const cloud = await h.fake();
    cloud.always(healthyStream(['cloud']));
    const { ollama, proxy } = await ollamaProxy([{ name: 'cloud', url: cloud.url }]);
    ollama.always((ctx) => {
      startOllamaStream(ctx);
      ollamaDone(ctx, 5, 0);
    });
    const res = await fetch(`${proxy.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.headers.get('x-llm-route-tier')).toBe('local');
    const { text } = await readAll(res);
    expect(text).toContain('"finish_reason":"stop"');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(cloud.requests).toHaveLength(0);
  });

  it('streams to a Messages client from Ollama text', async () => {
    const { ollama, proxy } = await ollamaProxy();
    ollama.always(ollamaTextStream(['Hej', ' då'], [12, 2]));
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'x', maxRetries: 0 });
    const message = await client.messages.stream({ model: 'chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Hej då' }]);
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 2 });
  });
});
