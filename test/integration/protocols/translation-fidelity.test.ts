import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completion, healthyStream, type Script } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { anthropicEvent, anthropicMessage, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import type { RunningProxy } from '../../helpers/proxy.js';

/** What a client gets through a translated tier that it would get from the server itself (docs/protocols.md, "What is translated"). */

const h = useHarness();

const anthropicClient = (proxy: RunningProxy): Anthropic => new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
const openaiClient = (proxy: RunningProxy): OpenAI => new OpenAI({ baseURL: `${proxy.origin}/v1`, apiKey: 'k', maxRetries: 0 });

/** Claude Code's metadata.user_id: a JSON string of its device, account and session ids (150 characters). */
const CLAUDE_CODE_USER_ID = JSON.stringify({
  device_id: 'f3b1c0de9a8e4c7b6d5a4f3e2d1c0b9a8f7e6d5c4b3a29180f1e2d3c4b5a6978',
  account_uuid: '',
  session_id: '4b9f2c1e-7a3d-4e8b-9c6f-1d2e3f4a5b6c',
});

/** An OpenAI-compatible server that enforces OpenRouter's 128-character limit on `user`, as OpenRouter does. */
const userLimited: Script = (ctx) => {
  const user = ctx.body.user;
  if (typeof user === 'string' && user.length > 128) {
    ctx.json(400, { error: { message: 'Input validation error: `user` must be at most 128 characters', code: 400 } });
    return;
  }
  return healthyStream(['fine'])(ctx);
};

describe('a translated Messages stream', () => {
  it('has an input-token estimate at message_start and the exact count, with cache reads of 0, at message_delta', async () => {
    const upstream = await h.fake();
    upstream.always(healthyStream(['Hel', 'lo']));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'chat', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'say hello to the whole wide world, please' }] }),
    });
    const events = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, any>);
    const start = events.find((event) => event.type === 'message_start');
    const delta = events.find((event) => event.type === 'message_delta');
    // llama-server and Anthropic put the prompt's count at the start: llm-route's own estimate, before the upstream's.
    expect(start?.message.usage.input_tokens).toBeGreaterThan(3);
    expect(start?.message.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 0 });
    // healthyStream reports 7 prompt tokens: the exact figure comes last.
    expect(delta?.usage).toEqual({ input_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 });
  });

  it("ends, through the real Anthropic SDK, with the upstream's count, not the estimate", async () => {
    const upstream = await h.fake();
    upstream.always(healthyStream(['a', 'b', 'c']));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const message = await anthropicClient(proxy)
      .messages.stream({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'x '.repeat(200) }] })
      .finalMessage();
    expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 0 });
  });
});

describe("Claude Code's metadata.user_id", () => {
  it("never reaches another vendor's `user`: a server enforcing OpenRouter's 128-character limit answers", async () => {
    const upstream = await h.fake();
    upstream.always(userLimited);
    const proxy = await h.proxy({ tiers: [{ name: 'router', url: upstream.url }] });
    expect(CLAUDE_CODE_USER_ID.length).toBeGreaterThan(128);
    const message = await anthropicClient(proxy)
      .messages.stream({
        model: 'chat',
        max_tokens: 50,
        metadata: { user_id: CLAUDE_CODE_USER_ID },
        messages: [{ role: 'user', content: 'hi' }],
      })
      .finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'fine' }]);
    expect(upstream.requests[0].body.user).toBeUndefined();
    expect(JSON.stringify(upstream.requests[0].body)).not.toContain('f3b1c0de');
  });

  it('the fake does refuse a long user (so the test above can fail)', async () => {
    const upstream = await h.fake();
    upstream.always(userLimited);
    const proxy = await h.proxy({ tiers: [{ name: 'router', url: upstream.url }] });
    const error = await openaiClient(proxy)
      .chat.completions.create({ model: 'chat', user: CLAUDE_CODE_USER_ID, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("is left out, with cache_control's ttl, when relayed to a server that imitates Anthropic; Anthropic itself gets both", async () => {
    const imitation = await h.fake();
    const anthropic = await h.fake();
    for (const fake of [imitation, anthropic]) fake.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const body = {
      max_tokens: 50,
      metadata: { user_id: CLAUDE_CODE_USER_ID },
      system: [{ type: 'text' as const, text: 'env', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }],
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'hi', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }] },
      ],
    };
    const viaImitation = await h.proxy({ tiers: [{ name: 'llama', url: imitation.url, provider: { passthrough: ['messages'] } }] });
    await anthropicClient(viaImitation).messages.create({ model: 'chat', ...body });
    const relayed = imitation.requests[0];
    expect(relayed.url).toBe('/v1/messages');
    expect(relayed.body.metadata).toBeUndefined();
    expect(relayed.body.system).toEqual([{ type: 'text', text: 'env', cache_control: { type: 'ephemeral' } }]);
    expect(relayed.body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }]);

    const viaAnthropic = await h.proxy({ tiers: [{ name: 'claude', url: anthropic.url, type: 'anthropic' }] });
    await anthropicClient(viaAnthropic).messages.create({ model: 'chat', ...body });
    expect(anthropic.requests[0].body).toMatchObject({ metadata: { user_id: CLAUDE_CODE_USER_ID }, system: body.system, messages: body.messages });
  });
});

describe("the client's body after an imitation left fields out", () => {
  it('is whole again for the Anthropic tier failed over to', async () => {
    const imitation = await h.fake();
    imitation.always((ctx) => ctx.json(503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } }));
    const anthropic = await h.fake();
    anthropic.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: imitation.url, provider: { passthrough: ['messages'] }, retry: { attempts: 1 } },
        { name: 'claude', url: anthropic.url, type: 'anthropic' },
      ],
    });
    const system = [{ type: 'text' as const, text: 'env', cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } }];
    await anthropicClient(proxy).messages.create({
      model: 'chat',
      max_tokens: 20,
      system,
      metadata: { user_id: CLAUDE_CODE_USER_ID },
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(imitation.requests[0].body.system).toEqual([{ type: 'text', text: 'env', cache_control: { type: 'ephemeral' } }]);
    expect(anthropic.requests[0].body).toMatchObject({ system, metadata: { user_id: CLAUDE_CODE_USER_ID } });
  });
});

const Weather = z.object({ city: z.string(), celsius: z.number(), sunny: z.boolean() });
const WEATHER_SCHEMA = z.toJSONSchema(Weather) as Record<string, unknown>;

/** Anthropic answering through the forced tool, as api.anthropic.com streams a tool_use block. */
function forcedToolAnswer(pieces: string[]): Script {
  return (ctx) => {
    startAnthropicStream(ctx, { input_tokens: 30, output_tokens: 1 });
    const tool = (ctx.body.tool_choice as { name: string }).name;
    anthropicEvent(ctx, 'content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_01A', name: tool, input: {} } });
    anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } });
    for (const piece of pieces) anthropicEvent(ctx, 'content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } });
    anthropicEvent(ctx, 'content_block_stop', { index: 0 });
    endAnthropicStream(ctx, 'tool_use', 12);
  };
}

describe('structured output onto an Anthropic tier', () => {
  it('chat json_schema, streamed: a forced tool, its input streamed back as the text, which parses against the schema', async () => {
    const upstream = await h.fake();
    upstream.always(forcedToolAnswer(['{"city": "Par', 'is", "celsius": 21', '.5, "sunny": true}']));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const stream = await openaiClient(proxy).chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: WEATHER_SCHEMA } },
    });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(Weather.parse(JSON.parse(text))).toEqual({ city: 'Paris', celsius: 21.5, sunny: true });
    expect(finish).toBe('stop');
    const sent = upstream.requests[0].body;
    expect(sent.tools).toEqual([expect.objectContaining({ input_schema: WEATHER_SCHEMA })]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: (sent.tools as Array<{ name: string }>)[0].name });
  });

  it('Responses text.format, whole: the answer is output_text that parses', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) =>
      ctx.json(
        200,
        anthropicMessage(
          [{ type: 'tool_use', id: 'toolu_01B', name: (ctx.body.tool_choice as { name: string }).name, input: { city: 'Oslo', celsius: -3, sunny: false } }],
          'tool_use',
        ),
      ),
    );
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const response = await openaiClient(proxy).responses.create({
      model: 'chat',
      input: 'weather in Oslo?',
      text: { format: { type: 'json_schema', name: 'weather', schema: WEATHER_SCHEMA } },
    });
    expect(Weather.parse(JSON.parse(response.output_text))).toEqual({ city: 'Oslo', celsius: -3, sunny: false });
    expect(response.output.some((item) => item.type === 'function_call')).toBe(false);
  });

  it("beside the client's own tools: the model must call one, and a real tool call still reaches the client as one", async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'tool_use', id: 'toolu_01C', name: 'lookup', input: { q: 'x' } }], 'tool_use')));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const answer = await openaiClient(proxy).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'go' }],
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    });
    expect(upstream.requests[0].body.tool_choice).toEqual({ type: 'any' });
    expect(answer.choices[0].finish_reason).toBe('tool_calls');
    expect(answer.choices[0].message.tool_calls?.[0]).toMatchObject({ id: 'toolu_01C', function: { name: 'lookup', arguments: '{"q":"x"}' } });
  });

  it('a schema whose top level is not an object skips the tier as unsupported, with a clear 400 when it is the only one', async () => {
    const upstream = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const error = await openaiClient(proxy)
      .chat.completions.create({
        model: 'chat',
        messages: [{ role: 'user', content: 'list' }],
        response_format: { type: 'json_schema', json_schema: { name: 'list', schema: { type: 'array', items: { type: 'string' } } } },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(String((error as Error).message)).toMatch(/top level is not an object/);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('Anthropic structured output onto an OpenAI-type tier', () => {
  it('output_config.format becomes response_format json_schema', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('{"city":"Rome","celsius":30,"sunny":true}')));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] });
    const res = await fetch(`${proxy.origin}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
      body: JSON.stringify({
        model: 'chat',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Rome?' }],
        output_config: { format: { type: 'json_schema', schema: WEATHER_SCHEMA } },
      }),
    });
    const message = (await res.json()) as { content: Array<{ text: string }> };
    expect(Weather.parse(JSON.parse(message.content[0].text)).city).toBe('Rome');
    expect(upstream.requests[0].body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'response', schema: WEATHER_SCHEMA } });
  });
});

/** Anthropic's refusal of thinking another provider signed, as api.anthropic.com words it. */
const INVALID_SIGNATURE = 'messages.1.content.0: Invalid `signature` in `thinking` block';

describe('thinking another provider signed', () => {
  const conversation = {
    max_tokens: 100,
    messages: [
      { role: 'user' as const, content: 'first' },
      {
        role: 'assistant' as const,
        content: [
          { type: 'thinking' as const, thinking: 'thought elsewhere', signature: 'c2lnbmVkLWJ5LWFub3RoZXItcHJvdmlkZXI=' },
          { type: 'text' as const, text: 'an answer from another tier' },
        ],
      },
      { role: 'user' as const, content: 'second' },
    ],
  };

  it('is retried once without the thinking blocks when the tier refuses their signature', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => {
      const history = JSON.stringify(ctx.body.messages);
      if (history.includes('"thinking"'))
        return ctx.json(400, { type: 'error', error: { type: 'invalid_request_error', message: INVALID_SIGNATURE }, request_id: 'req_sig' });
      ctx.json(200, anthropicMessage([{ type: 'text', text: 'answered' }]));
    });
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const message = await anthropicClient(proxy).messages.create({ model: 'chat', ...conversation });
    expect(message.content).toEqual([{ type: 'text', text: 'answered' }]);
    expect(upstream.requests).toHaveLength(2);
    expect(upstream.requests[1].body.messages).toEqual([
      conversation.messages[0],
      { role: 'assistant', content: [{ type: 'text', text: 'an answer from another tier' }] },
      conversation.messages[2],
    ]);
  });

  it("streams too, and a second refusal reaches the client as Anthropic's own 400 after exactly two tries", async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(400, { type: 'error', error: { type: 'invalid_request_error', message: INVALID_SIGNATURE }, request_id: 'req_sig' }));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    const error = await anthropicClient(proxy)
      .messages.stream({ model: 'chat', ...conversation })
      .finalMessage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((error as Error).message)).toContain('Invalid `signature`');
    expect(upstream.requests).toHaveLength(2);
  });

  it('is not retried for another 400, nor when the history has no thinking to leave out', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) =>
      ctx.json(400, { type: 'error', error: { type: 'invalid_request_error', message: ctx.index === 0 ? 'max_tokens: too large' : INVALID_SIGNATURE } }),
    );
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: upstream.url, type: 'anthropic' }] });
    await expect(anthropicClient(proxy).messages.create({ model: 'chat', ...conversation })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    expect(upstream.requests).toHaveLength(1);
    await expect(anthropicClient(proxy).messages.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    );
    expect(upstream.requests).toHaveLength(2);
  });
});
