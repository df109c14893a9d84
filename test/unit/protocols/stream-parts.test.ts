import { describe, expect, it } from 'vitest';
import { clientCodec, wireCodec } from '../../../src/protocols/registry.js';
import type { StreamPart } from '../../../src/protocols/core/stream-part.js';
import { TranslatedOutput } from '../../../src/protocols/stream-output/translated-output.js';
import {
  EVENT_CONTENT,
  EVENT_DONE,
  EVENT_FINISH,
  EVENT_PROGRESS,
  EVENT_USAGE,
  EVENT_USAGE_ONLY,
  newFacts,
  type EventFacts,
} from '../../../src/protocols/core/event-facts.js';
import type { WireProtocol } from '../../../src/protocols/core/types.js';

/**
 * Each wire's reader: every event decoded once into parts (blocks with start / delta / end and
 * ids), and the commit facts read from those same parts.
 */

interface Read {
  parts: StreamPart[];
  flags: number[];
  texts: Array<string | undefined>;
}

/** Reads each data payload in turn with one reader, as one stream. */
function read(protocol: WireProtocol, payloads: unknown[]): Read {
  const reader = wireCodec(protocol).reader();
  const facts = newFacts();
  const out: Read = { parts: [], flags: [], texts: [] };
  for (const payload of payloads) {
    reader.read(typeof payload === 'string' ? payload : JSON.stringify(payload), facts);
    out.parts.push(...facts.parts);
    out.flags.push(facts.flags);
    out.texts.push(facts.text);
  }
  return out;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({ id: 'c', choices: [{ index, delta, finish_reason: finish }] });
const committed = (flags: number) => (flags & EVENT_CONTENT) !== 0;

describe('chat reader', () => {
  it('gives runs of reasoning and text, and each tool call, their own blocks with ids, closed when the next starts or the choice finishes', () => {
    const { parts } = read('chat', [
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'hm' }),
      chunk({ content: 'Hi' }),
      chunk({ content: '!' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { name: 'g', arguments: '{"x":1}' } }] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    expect(parts).toEqual([
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'hm' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hi' },
      { type: 'text-delta', id: 'text-1', delta: '!' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-start', id: 'call_a', toolName: 'f' },
      { type: 'tool-input-delta', id: 'call_a', delta: '{}' },
      { type: 'tool-input-end', id: 'call_a' },
      // A call the server sent without an id gets one, which its deltas name.
      { type: 'tool-input-start', id: 'call_1', toolName: 'g' },
      { type: 'tool-input-delta', id: 'call_1', delta: '{"x":1}' },
      { type: 'tool-input-end', id: 'call_1' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('a role-only or empty delta is no part and does not commit', () => {
    const { parts, flags } = read('chat', [chunk({ role: 'assistant' }), chunk({ role: 'assistant', content: '' }), chunk({ content: '', tool_calls: [] })]);
    expect(parts).toEqual([]);
    expect(flags.map(committed)).toEqual([false, false, false]);
  });

  it('a legacy function_call delta is a tool call: it commits, and a translation renders it', () => {
    const payloads = [
      chunk({ role: 'assistant', function_call: { name: 'lookup', arguments: '' } }),
      chunk({ function_call: { arguments: '{"q":1}' } }),
      chunk({}, 'function_call'),
    ];
    const { parts, flags, texts } = read('chat', payloads);
    expect(parts).toEqual([
      { type: 'tool-input-start', id: 'call_0', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'call_0', delta: '{"q":1}' },
      { type: 'tool-input-end', id: 'call_0' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(flags.map(committed)).toEqual([true, true, true]);
    expect(texts).toEqual(['lookup', '{"q":1}', undefined]);
    const rendered = render('messages', 'chat', payloads);
    expect(rendered).toContain('"type":"tool_use","id":"call_0","name":"lookup"');
    expect(rendered).toContain('"partial_json":"{\\"q\\":1}"');
    expect(rendered).toContain('"stop_reason":"tool_use"');
  });

  it('reads every choice of an n > 1 stream (content in any commits), parts of choices past 0 marked, and a translation draws choice 0 alone', () => {
    const payloads = [chunk({ content: 'B' }, null, 1), chunk({ content: 'A' }, null, 0), chunk({}, 'stop', 1)];
    const { parts, flags } = read('chat', payloads);
    expect(flags.map(committed)).toEqual([true, true, true]);
    expect(parts).toEqual([
      { type: 'text-start', id: 'text-0', choice: 1 },
      { type: 'text-delta', id: 'text-0', delta: 'B', choice: 1 },
      { type: 'text-start', id: 'text-0' },
      { type: 'text-delta', id: 'text-0', delta: 'A' },
      { type: 'text-end', id: 'text-0', choice: 1 },
      { type: 'finish', reason: 'stop', choice: 1 },
    ]);
    const rendered = render('messages', 'chat', payloads);
    expect(rendered).toContain('"text":"A"');
    expect(rendered).not.toContain('"text":"B"');
  });

  it('facts: usage from the usage part, usage-only for a chunk with no choices, done for [DONE]', () => {
    const { flags } = read('chat', [{ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }, '[DONE]']);
    expect(flags).toEqual([EVENT_USAGE | EVENT_USAGE_ONLY, EVENT_DONE]);
  });
});

const anthropic = (type: string, data: Record<string, unknown> = {}) => ({ type, ...data });

describe('messages reader', () => {
  it("gives each content block its parts: start, deltas, end with the block index as id; a thinking block's signature comes with its end", () => {
    const { parts, flags } = read('messages', [
      anthropic('message_start', { message: { id: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }),
      anthropic('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
      anthropic('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hm' } }),
      anthropic('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      anthropic('content_block_stop', { index: 0 }),
      anthropic('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
      anthropic('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Ok' } }),
      anthropic('content_block_stop', { index: 1 }),
      anthropic('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } }),
      anthropic('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      anthropic('content_block_stop', { index: 2 }),
      anthropic('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
      anthropic('message_stop'),
    ]);
    expect(parts).toEqual([
      { type: 'usage', usage: { prompt_tokens: 5, completion_tokens: 1 } },
      { type: 'reasoning-start', id: '0' },
      { type: 'reasoning-delta', id: '0', delta: 'hm' },
      { type: 'reasoning-end', id: '0', signature: 'sig' },
      { type: 'text-start', id: '1' },
      { type: 'text-delta', id: '1', delta: 'Ok' },
      { type: 'text-end', id: '1' },
      { type: 'tool-input-start', id: 'toolu_1', toolName: 'f' },
      { type: 'tool-input-delta', id: 'toolu_1', delta: '{}' },
      { type: 'tool-input-end', id: 'toolu_1' },
      { type: 'usage', usage: { completion_tokens: 9 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    // Commits: the thinking delta, the text delta, the tool's start and input, the stop. Not message_start, starts without text, a signature or a block's end.
    expect(flags.map(committed)).toEqual([false, false, true, false, false, false, true, false, true, true, false, true, false]);
    expect(flags.at(-1)).toBe(EVENT_DONE);
  });

  it('an empty delta is nothing and does not commit; a delta of a kind only Anthropic has is opaque content', () => {
    const { parts, flags } = read('messages', [
      anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: '' } }),
      anthropic('content_block_delta', { index: 0, delta: { type: 'citations_delta', citation: { cited_text: 'x' } } }),
    ]);
    expect(parts).toEqual([{ type: 'text-start', id: '0' }, { type: 'opaque' }]);
    expect(flags.map(committed)).toEqual([false, false, true]);
  });
});

const responses = (type: string, data: Record<string, unknown> = {}) => ({ type, ...data });

describe('responses reader', () => {
  it('gives each output item a block named by its item id (a function call by its call_id), ended by output_item.done', () => {
    const { parts, flags } = read('responses', [
      responses('response.created', { response: { id: 'r', status: 'in_progress' } }),
      responses('response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
      responses('response.output_text.delta', { output_index: 0, item_id: 'msg_1', delta: 'Hi' }),
      responses('response.output_item.done', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
      responses('response.output_item.added', { output_index: 1, item: { id: 'fc_1', type: 'function_call', call_id: 'call_z', name: 'sh' } }),
      responses('response.function_call_arguments.delta', { output_index: 1, item_id: 'fc_1', delta: '{}' }),
      responses('response.output_item.done', { output_index: 1, item: { id: 'fc_1', type: 'function_call' } }),
      responses('response.completed', { response: { status: 'completed' } }),
    ]);
    expect(parts).toEqual([
      { type: 'text-start', id: 'msg_1' },
      { type: 'text-delta', id: 'msg_1', delta: 'Hi' },
      { type: 'text-end', id: 'msg_1' },
      { type: 'tool-input-start', id: 'call_z', toolName: 'sh' },
      { type: 'tool-input-delta', id: 'call_z', delta: '{}' },
      { type: 'tool-input-end', id: 'call_z' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(flags.map(committed)).toEqual([false, false, true, false, true, true, false, true]);
    expect(flags.at(-1)).toBe(EVENT_FINISH | EVENT_CONTENT | EVENT_PROGRESS | EVENT_DONE);
  });

  it('an item or delta of a kind only Responses has (a custom tool call) is opaque content: it commits a relay', () => {
    const { parts, flags } = read('responses', [
      responses('response.output_item.added', { output_index: 0, item: { id: 'ct_1', type: 'custom_tool_call', name: 'patch' } }),
      responses('response.custom_tool_call_input.delta', { output_index: 0, item_id: 'ct_1', delta: '*** Begin' }),
    ]);
    expect(parts).toEqual([{ type: 'opaque' }, { type: 'opaque', text: '*** Begin' }]);
    expect(flags.map(committed)).toEqual([true, true]);
  });
});

describe('ollama reader', () => {
  it('gives runs of thinking and content their own blocks, whole tool calls start, input and end, and closes what is open when done', () => {
    const line = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}) => ({
      model: 'q',
      message: { role: 'assistant', content: '', ...message },
      done,
      ...extra,
    });
    const { parts, flags } = read('ollama', [
      line({ thinking: 'hm' }),
      line({ content: 'Yes' }),
      line({ tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] }),
      line({ content: 'ok' }),
      line({}, true, { done_reason: 'stop', prompt_eval_count: 2, eval_count: 3 }),
    ]);
    expect(parts).toEqual([
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: 'hm' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Yes' },
      { type: 'text-end', id: 'text-1' },
      { type: 'tool-input-start', id: 'call_0', toolName: 'f' },
      { type: 'tool-input-delta', id: 'call_0', delta: '{"a":1}' },
      { type: 'tool-input-end', id: 'call_0' },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'ok' },
      { type: 'text-end', id: 'text-2' },
      { type: 'usage', usage: { prompt_tokens: 2, completion_tokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(flags.map(committed)).toEqual([true, true, true, true, true]);
  });
});

/** A stream of `wire` payloads rendered for a `client` client. */
function render(client: 'chat' | 'messages' | 'responses', wire: WireProtocol, payloads: unknown[]): string {
  const codec = clientCodec(client);
  const body = client === 'responses' ? { model: 'r', input: 'x', stream: true } : { model: 'r', messages: [], stream: true };
  const parsed = codec.parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const output = new TranslatedOutput(codec.renderer(parsed.request, parsed.request.model));
  const reader = wireCodec(wire).reader();
  const facts: EventFacts = newFacts();
  let out = '';
  for (const payload of payloads) {
    reader.read(typeof payload === 'string' ? payload : JSON.stringify(payload), facts);
    out += output.event(facts)?.toString() ?? '';
  }
  return out + output.complete().toString();
}

describe("renderers follow the parts' blocks", () => {
  const twoMessages = [
    responses('response.output_item.added', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
    responses('response.output_text.delta', { output_index: 0, item_id: 'msg_1', delta: 'one' }),
    responses('response.output_item.done', { output_index: 0, item: { id: 'msg_1', type: 'message' } }),
    responses('response.output_item.added', { output_index: 1, item: { id: 'msg_2', type: 'message' } }),
    responses('response.output_text.delta', { output_index: 1, item_id: 'msg_2', delta: 'two' }),
    responses('response.output_item.done', { output_index: 1, item: { id: 'msg_2', type: 'message' } }),
    responses('response.completed', { response: { status: 'completed' } }),
  ];

  it('two text blocks upstream are two content blocks for a Messages client, each closed at its end', () => {
    const events = render('messages', 'responses', twoMessages)
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.split('\ndata: ')[1]) as Record<string, unknown>);
    const blocks = events
      .filter((e) => e.type === 'content_block_start' || e.type === 'content_block_stop')
      .map((e) => `${e.type as string}:${e.index as number}`);
    expect(blocks).toEqual(['content_block_start:0', 'content_block_stop:0', 'content_block_start:1', 'content_block_stop:1']);
  });

  it('a block closes where its end part is, not when the answer ends', () => {
    const codec = clientCodec('responses');
    const parsed = codec.parse({ model: 'r', input: 'x', stream: true }, {});
    if (!parsed.ok) throw new Error(parsed.message);
    const renderer = codec.renderer(parsed.request, parsed.request.model);
    renderer.render([
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Hi' },
    ]);
    expect(renderer.render([{ type: 'text-end', id: 't' }])).toContain('response.output_text.done');
  });
});
