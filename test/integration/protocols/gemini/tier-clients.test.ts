import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { FakeGemini, geminiChunk, geminiStream, geminiWhole, RESPONSE_ID } from '../../../helpers/gemini-upstream.js';
import { logLine, readAll, useHarness } from '../../../helpers/harness.js';
import { sseEvents } from '../../../helpers/proxy.js';

/**
 * A gemini tier answering every other protocol's client (docs/protocols.md): the openai SDK
 * (Chat), the Anthropic SDK (Messages), ollama-js (Ollama's API) and raw Responses requests,
 * streamed and whole; thought text as reasoning, calls as tool calls with stable ids and JSON
 * arguments, Gemini's usage and finish in each protocol's words.
 */
const h = useHarness();
const KEY = 'AIza-test-key-0123456789';

async function geminiProxy() {
  const gemini = new FakeGemini(await h.fake());
  gemini.keys = [KEY];
  const proxy = await h.proxy({ tiers: [{ name: 'gemini', type: 'gemini', url: gemini.url, model: 'gemini-2.5-flash', api_key: KEY }] });
  return { gemini, proxy };
}

const WEATHER_TOOL = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const CALL_ID = `call_${RESPONSE_ID}_0`;

/** A turn of thought, text and two calls, ending STOP (as Gemini ends a turn of calls). */
const callTurn = geminiStream([
  geminiChunk([{ text: 'The user wants two cities.', thought: true }], { prompt: 30, thoughts: 6 }),
  geminiChunk([{ text: 'Checking both.' }], { prompt: 30, candidates: 3, thoughts: 6 }),
  geminiChunk(
    [
      { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'EjQKMgG-gemini-signature' },
      { functionCall: { name: 'get_weather', args: { city: 'Bergen' } } },
    ],
    { prompt: 30, candidates: 17, thoughts: 6 },
    'STOP',
  ),
]);

describe('a gemini tier, for an openai SDK client (Chat)', () => {
  it('streams reasoning and text, usage with thoughts as output, the key only in x-goog-api-key', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(
      geminiStream([
        geminiChunk([{ text: '**Greeting**', thought: true }], { prompt: 8, thoughts: 4 }),
        geminiChunk([{ text: 'Hello' }], { prompt: 8, candidates: 1, thoughts: 4 }),
        geminiChunk([{ text: ' there!' }], { prompt: 8, candidates: 3, thoughts: 4 }, 'STOP'),
      ]),
    );
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'chat',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    let text = '';
    let reasoning = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const part of stream) {
      const delta = part.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      text += delta?.content ?? '';
      reasoning += delta?.reasoning_content ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
      usage = part.usage ?? usage;
    }
    expect([text, reasoning, finish]).toEqual(['Hello there!', '**Greeting**', 'stop']);
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 7 });
    const [sent] = gemini.calls;
    expect(sent.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } },
    });
  });

  it('answers whole with tool calls (ids stable, arguments JSON) and carries them back as functionCall/functionResponse', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(geminiWhole([{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'EjQK-sig' }], { prompt: 20, candidates: 5 }));
    gemini.next(geminiWhole([{ text: 'It is 5°C in Oslo.' }], { prompt: 40, candidates: 8 }));
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'unused', maxRetries: 0 });
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const first = await client.chat.completions.create({ model: 'chat', messages, tools: [WEATHER_TOOL] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls?.[0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call).toEqual({ id: CALL_ID, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });
    expect(first.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 5 });
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '5°C' });
    const second = await client.chat.completions.create({ model: 'chat', messages, tools: [WEATHER_TOOL] });
    expect(second.choices[0].message.content).toBe('It is 5°C in Oslo.');
    expect(gemini.calls[1].url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(gemini.calls[1].body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
      // The Chat client kept no signature: the call goes back with the one Google documents for it.
      {
        role: 'model',
        parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' }, id: CALL_ID }, thoughtSignature: 'skip_thought_signature_validator' }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '5°C' }, id: CALL_ID } }] },
    ]);
    expect(gemini.calls[1].body.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: WEATHER_TOOL.function.parameters }] }]);
  });
});

describe('a gemini tier, for an Anthropic SDK client (Messages)', () => {
  it('streams thinking, text and two tool_use blocks, stop_reason tool_use, the usage', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(callTurn);
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'unused', maxRetries: 0 });
    const message = await client.messages
      .stream({
        model: 'chat',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        messages: [{ role: 'user', content: 'Weather in Oslo and Bergen?' }],
      })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);
    expect(message.content[1]).toMatchObject({ type: 'text', text: 'Checking both.' });
    expect(message.content.slice(2)).toEqual([
      { type: 'tool_use', id: CALL_ID, name: 'get_weather', input: { city: 'Oslo' } },
      { type: 'tool_use', id: `call_${RESPONSE_ID}_1`, name: 'get_weather', input: { city: 'Bergen' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 30, output_tokens: 23 });
    // Gemini's signature stays Gemini's: an Anthropic client never sees it.
    expect(JSON.stringify(message)).not.toContain('gemini-signature');
    expect(gemini.calls[0].body.generationConfig).toEqual({ maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
  });

  it('answers whole, max tokens as max_tokens', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(geminiWhole([{ text: 'Cut sh' }], { prompt: 12, candidates: 3 }, 'MAX_TOKENS'));
    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'unused', maxRetries: 0 });
    const message = await client.messages.create({ model: 'chat', max_tokens: 3, messages: [{ role: 'user', content: 'Tell me a story' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'Cut sh' }]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 3 });
  });
});

describe('a gemini tier, for ollama-js (Ollama API)', () => {
  it('streams text and tool calls with arguments as objects, then done', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(callTurn);
    const ollama = new Ollama({ host: proxy.origin });
    const stream = await ollama.chat({ model: 'chat', stream: true, tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'Weather?' }] });
    let content = '';
    const calls: Array<{ name: string; arguments: unknown }> = [];
    let done: Record<string, unknown> | undefined;
    for await (const part of stream) {
      content += part.message.content;
      for (const call of part.message.tool_calls ?? []) calls.push({ name: call.function.name, arguments: call.function.arguments });
      if (part.done) done = part as unknown as Record<string, unknown>;
    }
    expect(content).toBe('Checking both.');
    expect(calls).toEqual([
      { name: 'get_weather', arguments: { city: 'Oslo' } },
      { name: 'get_weather', arguments: { city: 'Bergen' } },
    ]);
    expect(done).toMatchObject({ done: true, prompt_eval_count: 30, eval_count: 23 });
  });

  it('answers whole', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(geminiWhole([{ text: 'Hi from Gemini.' }], { prompt: 4, candidates: 4 }));
    const answer = await new Ollama({ host: proxy.origin }).chat({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.message.content).toBe('Hi from Gemini.');
    expect([answer.done_reason, answer.prompt_eval_count, answer.eval_count]).toEqual(['stop', 4, 4]);
  });
});

describe('a gemini tier, for a Responses client', () => {
  it('streams text deltas and function_call items, completed with the usage', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(callTurn);
    const res = await fetch(`${proxy.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', stream: true, input: 'Weather?', tools: [{ type: 'function', ...WEATHER_TOOL.function }] }),
    });
    const events = sseEvents((await readAll(res)).text) as Array<Record<string, unknown>>;
    const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    expect(text.join('')).toBe('Checking both.');
    const calls = events.filter((e) => e.type === 'response.output_item.done' && (e.item as { type: string }).type === 'function_call').map((e) => e.item);
    expect(calls).toMatchObject([
      { type: 'function_call', call_id: CALL_ID, name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Bergen"}' },
    ]);
    const completed = events.find((e) => e.type === 'response.completed')?.response as { usage: Record<string, unknown> };
    expect(completed.usage).toMatchObject({ input_tokens: 30, output_tokens: 23 });
  });

  it('answers whole; the request log carries the usage and the tier', async () => {
    const { gemini, proxy } = await geminiProxy();
    gemini.next(geminiWhole([{ text: 'Whole.' }], { prompt: 6, candidates: 2 }));
    const res = await fetch(`${proxy.baseURL}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', input: 'hi' }),
    });
    const body = (await res.json()) as { output: Array<{ type: string; content?: Array<{ text: string }> }>; usage: Record<string, unknown> };
    expect(res.status).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('gemini');
    expect(body.output.find((item) => item.type === 'message')?.content?.[0].text).toBe('Whole.');
    expect(body.usage).toMatchObject({ input_tokens: 6, output_tokens: 2 });
    const line = await logLine(proxy, res.headers.get('x-request-id'));
    expect(line.usage).toEqual({ prompt_tokens: 6, completion_tokens: 2 });
  });
});
