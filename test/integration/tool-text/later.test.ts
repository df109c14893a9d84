import { describe, expect, it } from 'vitest';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';
import { completion } from '../../helpers/fake-upstream.js';
import { readAll, requestLog, useHarness } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import { chat, sseData, type TierSpec } from '../../helpers/proxy.js';
import {
  anthropicClient,
  anthropicContent,
  CHAT_TOOLS,
  MESSAGES_TOOLS,
  ollamaContent,
  openaiClient,
  piecesOf,
  recordingFetch,
  RESPONSES_TOOLS,
  responsesContent,
  sseContent,
} from '../../helpers/tool-text-kit.js';
import { HERMES } from '../../helpers/tool-text-forms.js';

// docs/tool-text.md: text first, then a call written as text — the text goes out
// as it comes, the form after it becomes a native call of the client's protocol, on relayed
// (same-protocol) streams as on rendered ones, and in whole answers; a form that holds no usable
// call after text goes out as the text it was (the stream has committed).
const h = useHarness();

const WEATHER_TOOLS = {
  chat: [
    ...CHAT_TOOLS,
    {
      type: 'function' as const,
      function: {
        name: 'get_weather',
        description: 'Weather of a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ],
};
const TEXT = 'Let me check the weather in Paris.\n';
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const SECOND = HERMES;

async function oneTier(spec: Omit<TierSpec, 'name' | 'url'> & { port?: boolean }) {
  const fake = await h.fake();
  const url = spec.type === 'ollama' || spec.type === 'anthropic' ? `http://127.0.0.1:${fake.port}` : fake.url;
  const { port: _port, ...rest } = spec;
  const proxy = await h.proxy({ tiers: [{ name: 'local', url, model: 'qwen2.5-coder:7b', ...rest }] });
  return { fake, proxy };
}

describe('text, then a call written as text, on a relayed Chat stream (openai-type tier, Chat client)', () => {
  it('the text goes out as it comes, the call after it as a native tool call (index 0, call_ id, finish tool_calls); no raw form', async () => {
    const { fake, proxy } = await oneTier({});
    fake.always(sseContent([...piecesOf(TEXT, 5), ...piecesOf(CALL, 4)], { paceMs: 3 }));
    const seen = recordingFetch();
    const stream = await openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: WEATHER_TOOLS.chat,
    });
    let text = '';
    const calls: Array<{ index: number; id?: string; name?: string; args: string }> = [];
    let finish: string | null = null;
    const ids = new Set<string>();
    for await (const c of stream) {
      ids.add(c.id);
      text += c.choices[0]?.delta.content ?? '';
      for (const call of c.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { index: call.index, id: call.id, name: call.function?.name, args: '' };
        calls[call.index].args += call.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(TEXT);
    expect(calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), name: 'get_weather', args: '{"city":"Paris"}' }]);
    expect(finish).toBe('tool_calls');
    // One message: the rendered chunks carry on under the relayed chunks' id.
    expect(ids.size).toBe(1);
    expect(seen.bodies[0]).not.toContain('tool_call>');
    expect(seen.bodies[0]).not.toContain('get_weather\\"');
    // The text went out as the upstream's own bytes (its fingerprint field kept), before the form began.
    expect(seen.bodies[0].split('\n').filter((l) => l.includes('"content":"Let m')).length).toBe(1);
    const line = await requestLog(proxy);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 1, repaired: false, result: 'recovered' });
  });

  it('two calls after text are two native calls (indexes 0 and 1), and the log counts 2', async () => {
    const { fake, proxy } = await oneTier({});
    fake.always(sseContent(piecesOf(`${TEXT}${CALL}\n${SECOND}`, 6)));
    const { text } = await readAll(await chat(proxy, { stream: true, tools: WEATHER_TOOLS.chat }));
    const chunks = sseData(text)
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d));
    const starts = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((call: { id?: string }) => call.id);
    expect(starts.map((call: { index: number; function: { name: string } }) => [call.index, call.function.name])).toEqual([
      [0, 'get_weather'],
      [1, 'Bash'],
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(TEXT);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
    expect((await requestLog(proxy)).tool_text).toEqual({ format: 'hermes', calls: 2, repaired: false, result: 'recovered' });
  });

  it('a form after text that holds no usable call goes out as the text it was (no failover after commit), the log says passed_as_text', async () => {
    const { fake, proxy } = await oneTier({});
    const bad = CALL.replace('get_weather', 'Nope');
    fake.always(sseContent(piecesOf(`${TEXT}${bad}`, 5)));
    const { text } = await readAll(await chat(proxy, { stream: true, tools: WEATHER_TOOLS.chat }));
    const chunks = sseData(text)
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(`${TEXT}${bad}`);
    expect(text).not.toContain('"tool_calls"');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect((await requestLog(proxy)).tool_text).toEqual({ format: 'hermes', calls: 0, repaired: false, result: 'passed_as_text' });
  });

  it('text that only looks like the start of an opener (`<tool`, `[TOOL`) stays the byte relay it was', async () => {
    const { fake, proxy } = await oneTier({});
    const pieces = ['Use a ', '<', 'tool', '> tag or ', '[TOOL', ']', ' here, ', '<b>', 'ok</b>'];
    fake.always(sseContent(pieces));
    const withTools = (await readAll(await chat(proxy, { stream: true, tools: CHAT_TOOLS }))).text;
    const without = (await readAll(await chat(proxy, { stream: true }))).text;
    expect(withTools).toBe(without);
    expect(proxy.logs.filter((l) => l.event === 'request').every((l) => l.tool_text === undefined)).toBe(true);
  });

  it('whole answers too: the text, then the call, with finish tool_calls', async () => {
    const { fake, proxy } = await oneTier({});
    fake.next((ctx) => ctx.json(200, completion(`${TEXT}${CALL}`)));
    const answer = await openaiClient(proxy, fetch).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'x' }],
      tools: WEATHER_TOOLS.chat,
    });
    expect(answer.choices[0].message.content).toBe(TEXT);
    expect(answer.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    ]);
    expect(answer.choices[0].finish_reason).toBe('tool_calls');
  });
});

describe('text, then a call written as text, for the other clients', () => {
  it('Messages client, Anthropic-type tier (a relay): the text block, then a tool_use block at the next index, stop_reason tool_use', async () => {
    const { fake, proxy } = await oneTier({ type: 'anthropic' });
    const text = 'Let me list the files.\n';
    fake.always(anthropicContent([...piecesOf(text, 5), ...piecesOf(HERMES, 5)], { paceMs: 2 }));
    const seen = recordingFetch();
    const message = await anthropicClient(proxy, seen.fetch)
      .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'ls' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'text', text },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bash', input: { command: 'ls -la' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    // The message the relayed bytes started (its id, its input tokens) is the one that ends.
    expect(message.id).toBe('msg_01FakeUpstream');
    expect(message.usage.input_tokens).toBe(25);
    const starts = seen.bodies[0].split('\n').filter((l) => l.includes('"content_block_start"'));
    expect(starts.map((l) => JSON.parse(l.slice(6)).index)).toEqual([0, 1]);
    expect(seen.bodies[0]).not.toContain('tool_call>');
  });

  it('Responses client, Responses passthrough tier (a relay): the message item, then a function_call item; response.completed lists both', async () => {
    const { fake, proxy } = await oneTier({ provider: { passthrough: ['responses'] } });
    const text = 'Listing them now.\n';
    fake.always(responsesContent([...piecesOf(text, 4), ...piecesOf(HERMES, 4)]));
    const seen = recordingFetch();
    const response = await openaiClient(proxy, seen.fetch).responses.stream({ model: 'chat', input: 'ls', tools: RESPONSES_TOOLS }).finalResponse();
    expect(response.id).toBe('resp_upstream');
    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    expect(response.output[0]).toMatchObject({ id: 'msg_upstream', status: 'completed', content: [{ type: 'output_text', text }] });
    expect(response.output[1]).toMatchObject({
      type: 'function_call',
      name: 'Bash',
      call_id: expect.stringMatching(/^call_/),
      arguments: '{"command":"ls -la"}',
    });
    const sequence = seen.bodies[0]
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)).sequence_number);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(seen.bodies[0]).not.toContain('tool_call>');
  });

  it('Messages client, Ollama tier (rendered): the text, then the call; and a whole answer from an Anthropic-type tier', async () => {
    const ollama = await oneTier({ type: 'ollama' });
    ollama.fake.always(ollamaContent(piecesOf(`Sure.\n${HERMES}`, 6)));
    const message = await anthropicClient(ollama.proxy, fetch)
      .messages.stream({ model: 'chat', max_tokens: 512, messages: [{ role: 'user', content: 'ls' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
    expect(message.stop_reason).toBe('tool_use');

    const anthropic = await oneTier({ type: 'anthropic' });
    anthropic.fake.next((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: `Sure.\n${HERMES}` }])));
    const whole = await anthropicClient(anthropic.proxy, fetch).messages.create({
      model: 'chat',
      max_tokens: 512,
      messages: [{ role: 'user', content: 'ls' }],
      tools: MESSAGES_TOOLS,
    });
    expect(whole.content).toEqual([
      { type: 'text', text: 'Sure.\n' },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Bash', input: { command: 'ls -la' } },
    ]);
    expect(whole.stop_reason).toBe('tool_use');
    const ollamaWholeTier = await oneTier({ type: 'ollama' });
    ollamaWholeTier.fake.next((ctx) => ctx.json(200, ollamaWhole({ content: `Sure.\n${HERMES}` })));
    const responses = await openaiClient(ollamaWholeTier.proxy, fetch).responses.create({ model: 'chat', input: 'ls', tools: RESPONSES_TOOLS });
    expect(responses.output.map((item) => item.type)).toEqual(['message', 'function_call']);
  });
});
