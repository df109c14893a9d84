import { type Content, FunctionCallingConfigMode, GoogleGenAI, type Tool, Type } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { anthropicMessage, anthropicText, anthropicToolUse, endAnthropicStream, startAnthropicStream } from '../../helpers/anthropic-upstream.js';
import { chunk, type ScriptContext } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { ollamaDone, ollamaLine, ollamaWhole, startOllamaStream } from '../../helpers/ollama-upstream.js';
import { DEAD_URL, type TierSpec } from '../../helpers/proxy.js';

/**
 * Function calling with @google/genai through every tier type behind a dead first tier:
 * declarations (Gemini's Schema and JSON Schema), calls streamed in pieces reaching the app
 * whole, their responses across turns paired with the calls, toolConfig's modes.
 */
const h = useHarness();

const TOOLS: Tool[] = [
  {
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
      },
      { name: 'read_file', description: 'Read a file', parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    ],
  },
  // Runs at Google: no other tier has it, so it is left out.
  { googleSearch: {} },
];

async function clientFor(tier: TierSpec) {
  const proxy = await h.proxy({ tiers: [{ name: 'dead', url: DEAD_URL }, tier] });
  return new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: proxy.origin } });
}

/** A Chat Completions tool call streamed in pieces, as OpenAI-compatible servers do. */
function chatToolCall(ctx: ScriptContext): void {
  ctx.startStream();
  ctx.event(
    chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  );
  ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
  ctx.event(chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }));
  ctx.event(chunk({}, 'tool_calls'));
  ctx.usage(30, 9);
  ctx.done();
}

const TURN_ONE: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Oslo?' }] }];

describe('@google/genai function calling', () => {
  it('OpenAI-compatible tier: the declarations as JSON Schema, the streamed call whole (no id, as Gemini sends none), STOP; the response paired with it next turn', async () => {
    const fake = await h.fake();
    fake.next(chatToolCall).next((ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('Sunny.');
      ctx.finish();
      ctx.done();
    });
    const ai = await clientFor({ name: 'cloud', url: fake.url });
    const first = await ai.models.generateContentStream({ model: 'chat', contents: TURN_ONE, config: { tools: TOOLS } });
    const chunks = [];
    for await (const piece of first) chunks.push(piece);
    const calls = chunks.flatMap((piece) => piece.functionCalls ?? []);
    expect(calls).toEqual([{ name: 'get_weather', args: { city: 'Oslo' } }]);
    expect(chunks.at(-1)?.candidates?.[0].finishReason).toBe('STOP');
    expect(fake.requests[0].body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Read a file',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
      },
    ]);

    const second = await ai.models.generateContentStream({
      model: 'chat',
      contents: [
        ...TURN_ONE,
        { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny, 21°C' } } }] },
      ],
      config: { tools: TOOLS },
    });
    const texts = [];
    for await (const piece of second) texts.push(piece.text ?? '');
    expect(texts.join('')).toBe('Sunny.');
    expect((fake.requests[1].body.messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: 'sunny, 21°C' },
    ]);
  });

  it("the client's own call ids (as Gemini CLI sends them) reach the tier, and an answer's calls then carry ids too", async () => {
    const fake = await h.fake();
    fake.always(chatToolCall);
    const ai = await clientFor({ name: 'cloud', url: fake.url });
    const stream = await ai.models.generateContentStream({
      model: 'chat',
      contents: [
        ...TURN_ONE,
        { role: 'model', parts: [{ functionCall: { id: 'get_weather_1', name: 'get_weather', args: { city: 'Bergen' } } }] },
        { role: 'user', parts: [{ functionResponse: { id: 'get_weather_1', name: 'get_weather', response: { output: 'rain' } } }] },
      ],
      config: { tools: TOOLS },
    });
    const calls = [];
    for await (const piece of stream) calls.push(...(piece.functionCalls ?? []));
    expect(calls).toEqual([{ id: 'call_w1', name: 'get_weather', args: { city: 'Oslo' } }]);
    const messages = fake.requests[0].body.messages as Array<Record<string, unknown>>;
    expect(messages[1]).toMatchObject({ tool_calls: [{ id: 'get_weather_1' }] });
    expect(messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'get_weather_1' });
  });

  it("toolConfig: ANY with one allowed name forces that tool, NONE forbids every tool (each in the tier's terms)", async () => {
    const fake = await h.fake();
    fake.always(chatToolCall);
    const ai = await clientFor({ name: 'cloud', url: fake.url });
    const forced = { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } };
    for await (const _ of await ai.models.generateContentStream({ model: 'chat', contents: TURN_ONE, config: { tools: TOOLS, toolConfig: forced } }));
    expect(fake.requests[0].body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect((fake.requests[0].body.tools as unknown[]).length).toBe(1);
    const none = { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } };
    for await (const _ of await ai.models.generateContentStream({ model: 'chat', contents: TURN_ONE, config: { tools: TOOLS, toolConfig: none } }));
    expect(fake.requests[1].body.tool_choice).toBe('none');
  });

  it('Anthropic tier: text then a tool_use streamed in pieces become a text part and a functionCall; the response goes back as a tool_result', async () => {
    const fake = await h.fake();
    fake.next((ctx) => {
      startAnthropicStream(ctx);
      anthropicText(ctx, 0, ['Checking.']);
      anthropicToolUse(ctx, 1, 'toolu_01', 'get_weather', ['{"city"', ':"Oslo"}']);
      endAnthropicStream(ctx, 'tool_use', 12);
    });
    fake.next((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'Sunny.' }])));
    const ai = await clientFor({ name: 'claude', url: `http://127.0.0.1:${fake.port}`, type: 'anthropic', model: 'claude-sonnet-4-5', api_key: 'sk-ant-test' });
    const parts = [];
    for await (const piece of await ai.models.generateContentStream({ model: 'chat', contents: TURN_ONE, config: { tools: TOOLS } }))
      parts.push(...(piece.candidates?.[0].content?.parts ?? []));
    expect(parts.filter((part) => part.text || part.functionCall)).toEqual([
      { text: 'Checking.' },
      { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } },
    ]);
    expect(fake.requests[0].body.tools).toEqual([
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
      { name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    ]);
    const whole = await ai.models.generateContent({
      model: 'chat',
      contents: [
        ...TURN_ONE,
        { role: 'model', parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temperature: 21 } } }] },
      ],
      config: { tools: TOOLS },
    });
    expect(whole.text).toBe('Sunny.');
    const messages = fake.requests[1].body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages[1].content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_0', name: 'get_weather', input: { city: 'Oslo' } },
    ]);
    expect(messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'call_0', content: [{ type: 'text', text: '{"temperature":21}' }] }]);
  });

  it('Ollama tier: its tool_calls line becomes a functionCall; a whole answer with a call is one functionCall part', async () => {
    const fake = await h.fake();
    fake.next((ctx) => {
      startOllamaStream(ctx);
      ollamaLine(ctx, { content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] });
      ollamaDone(ctx, 20, 6);
    });
    fake.next((ctx) => ctx.json(200, ollamaWhole({ tool_calls: [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }] })));
    const ai = await clientFor({ name: 'local', url: `http://127.0.0.1:${fake.port}`, type: 'ollama', model: 'qwen2.5:7b' });
    const calls = [];
    for await (const piece of await ai.models.generateContentStream({ model: 'chat', contents: TURN_ONE, config: { tools: TOOLS } }))
      calls.push(...(piece.functionCalls ?? []));
    expect(calls).toEqual([{ name: 'get_weather', args: { city: 'Oslo' } }]);
    const whole = await ai.models.generateContent({ model: 'chat', contents: 'read a.txt', config: { tools: TOOLS } });
    expect(whole.functionCalls).toEqual([{ name: 'read_file', args: { path: 'a.txt' } }]);
    expect(whole.candidates?.[0].finishReason).toBe('STOP');
    expect(fake.requests[1].body.tools).toHaveLength(2);
  });
});
