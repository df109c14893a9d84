import { describe, expect, it } from 'vitest';
import { clientCodec, wireCodec } from '../../../src/protocols/registry.js';
import type { StreamPart } from '../../../src/protocols/core/stream-part.js';
import { newFacts } from '../../../src/protocols/core/event-facts.js';
import type { WireProtocol } from '../../../src/protocols/core/types.js';
import type { ClientProtocol } from '../../../src/telemetry/events.js';
import { type NeutralEvent, partsOf, eventsOf } from '../../helpers/stream-events.js';

/**
 * Stream translation, table-driven: recorded upstream event sequences (each server's exact
 * wire bytes) decode to the expected neutral events, and every client renderer's output
 * decodes back to what it was given (render ∘ decode is the identity on neutral events).
 */

function decode(protocol: WireProtocol, bytes: string): NeutralEvent[] {
  const wire = wireCodec(protocol);
  const framer = wire.framer();
  const reader = wire.reader();
  const facts = newFacts();
  const parts: StreamPart[] = [];
  const onEvent = (_raw: Buffer, data: string | null): void => {
    if (data === null) return;
    reader.read(data, facts);
    parts.push(...facts.parts);
  };
  // Byte by byte: decoding must not depend on how the bytes were split.
  const buffer = Buffer.from(bytes);
  for (let i = 0; i < buffer.length; i++) framer.push(buffer.subarray(i, i + 1), onEvent);
  framer.flush(onEvent);
  return eventsOf(parts);
}

const sse = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
const anthropic = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  sse({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });

const RECORDED: Array<{ name: string; wire: WireProtocol; bytes: string; events: NeutralEvent[] }> = [
  {
    name: 'OpenAI chat: reasoning, text, two tool calls with streamed arguments, finish, trailing usage',
    wire: 'chat',
    bytes:
      chunk({ role: 'assistant', content: '' }) +
      chunk({ reasoning_content: 'hmm' }) +
      chunk({ content: 'Hi' }) +
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }) +
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }) +
      chunk({}, 'tool_calls') +
      sse({
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13, prompt_tokens_details: { cached_tokens: 6 } },
      }) +
      'data: [DONE]\n\n',
    events: [
      { type: 'reasoning', delta: 'hmm' },
      { type: 'text', delta: 'Hi' },
      { type: 'tool_call_start', index: 0, id: 'call_a', name: 'f' },
      { type: 'tool_call_delta', index: 0, delta: '{"x":1}' },
      { type: 'tool_call_start', index: 1, id: 'call_b', name: 'g' },
      { type: 'tool_call_delta', index: 1, delta: '{}' },
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: { prompt_tokens: 9, completion_tokens: 4, cached_tokens: 6 } },
    ],
  },
  {
    name: 'Anthropic: thinking with signature, text, tool_use with input_json_delta, stop and usage in pieces',
    wire: 'messages',
    bytes:
      anthropic('message_start', {
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude',
          stop_reason: null,
          usage: { input_tokens: 10, cache_read_input_tokens: 40, output_tokens: 1 },
        },
      }) +
      anthropic('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }) +
      anthropic('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'let me see' } }) +
      anthropic('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBsig' } }) +
      anthropic('content_block_stop', { index: 0 }) +
      anthropic('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }) +
      anthropic('ping', {}) +
      anthropic('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'Sure.' } }) +
      anthropic('content_block_stop', { index: 1 }) +
      anthropic('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } }) +
      anthropic('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '' } }) +
      anthropic('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '{"x":' } }) +
      anthropic('content_block_delta', { index: 2, delta: { type: 'input_json_delta', partial_json: '1}' } }) +
      anthropic('content_block_stop', { index: 2 }) +
      anthropic('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 33 } }) +
      anthropic('message_stop', {}),
    events: [
      { type: 'usage', usage: { prompt_tokens: 50, completion_tokens: 1, cached_tokens: 40 } },
      { type: 'reasoning', delta: 'let me see' },
      { type: 'reasoning_signature', signature: 'EqQBsig' },
      { type: 'text', delta: 'Sure.' },
      { type: 'tool_call_start', index: 0, id: 'toolu_1', name: 'f' },
      { type: 'tool_call_delta', index: 0, delta: '{"x":' },
      { type: 'tool_call_delta', index: 0, delta: '1}' },
      { type: 'usage', usage: { completion_tokens: 33 } },
      { type: 'finish', reason: 'tool_calls' },
    ],
  },
  {
    name: 'Responses: created, reasoning summary, text, function call, completed with usage',
    wire: 'responses',
    bytes: [
      { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_summary_text.delta', sequence_number: 2, item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'plan' },
      { type: 'response.output_item.added', sequence_number: 3, output_index: 1, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } },
      { type: 'response.output_text.delta', sequence_number: 4, item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Ok' },
      {
        type: 'response.output_item.added',
        sequence_number: 5,
        output_index: 2,
        item: { id: 'fc_1', type: 'function_call', call_id: 'call_z', name: 'sh', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', sequence_number: 6, item_id: 'fc_1', output_index: 2, delta: '{"c":"ls"}' },
      {
        type: 'response.completed',
        sequence_number: 7,
        response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 5 }, output_tokens: 7 } },
      },
    ]
      .map((e) => `event: ${e.type}\n${sse(e)}`)
      .join(''),
    events: [
      { type: 'reasoning', delta: 'plan' },
      { type: 'text', delta: 'Ok' },
      { type: 'tool_call_start', index: 0, id: 'call_z', name: 'sh' },
      { type: 'tool_call_delta', index: 0, delta: '{"c":"ls"}' },
      { type: 'usage', usage: { prompt_tokens: 20, completion_tokens: 7, cached_tokens: 5 } },
      { type: 'finish', reason: 'tool_calls' },
    ],
  },
  {
    name: 'Ollama NDJSON: thinking, text, whole tool calls, done with counts',
    wire: 'ollama',
    bytes: [
      { model: 'q', created_at: 't', message: { role: 'assistant', content: '', thinking: 'hm' }, done: false },
      { model: 'q', created_at: 't', message: { role: 'assistant', content: 'Yes' }, done: false },
      { model: 'q', created_at: 't', message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] }, done: false },
      { model: 'q', created_at: 't', message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, prompt_eval_count: 11, eval_count: 3 },
    ]
      .map((line) => `${JSON.stringify(line)}\r\n`)
      .join(''),
    events: [
      { type: 'reasoning', delta: 'hm' },
      { type: 'text', delta: 'Yes' },
      { type: 'tool_call_start', index: 0, id: 'call_0', name: 'f' },
      { type: 'tool_call_delta', index: 0, delta: '{"a":1}' },
      { type: 'usage', usage: { prompt_tokens: 11, completion_tokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ],
  },
];

describe('recorded upstream streams decode to neutral events, however the bytes are split', () => {
  for (const { name, wire, bytes, events } of RECORDED) {
    it(name, () => {
      expect(decode(wire, bytes)).toEqual(events);
    });
  }
});

const CONVERSATION: NeutralEvent[] = [
  { type: 'reasoning', delta: 'first ' },
  { type: 'reasoning', delta: 'thought' },
  { type: 'text', delta: 'Hello' },
  { type: 'text', delta: ' world' },
  { type: 'tool_call_start', index: 0, id: 'call_1', name: 'lookup' },
  { type: 'tool_call_delta', index: 0, delta: '{"q":' },
  { type: 'tool_call_delta', index: 0, delta: '"x"}' },
  { type: 'tool_call_start', index: 1, id: 'call_2', name: 'other' },
  { type: 'tool_call_delta', index: 1, delta: '{}' },
  { type: 'finish', reason: 'tool_calls' },
  { type: 'usage', usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 } },
];

/** Folds usage pieces into one and drops what a protocol cannot carry, to compare round trips. */
function normalise(events: NeutralEvent[]): unknown[] {
  let usage: Record<string, number> = {};
  const out: unknown[] = [];
  for (const event of events) {
    if (event.type === 'usage') usage = { ...usage, ...event.usage };
    else out.push(event);
  }
  return [...out.filter((e) => (e as NeutralEvent).type !== 'finish'), { finish: out.find((e) => (e as NeutralEvent).type === 'finish') }, { usage }];
}

const ROUND_TRIPS: Array<{ client: ClientProtocol; wire: WireProtocol }> = [
  { client: 'chat', wire: 'chat' },
  { client: 'messages', wire: 'messages' },
  { client: 'responses', wire: 'responses' },
];

describe("each client renderer's stream decodes back to the events it rendered", () => {
  for (const { client, wire } of ROUND_TRIPS) {
    it(`${client}`, () => {
      const codec = clientCodec(client);
      const parsed = codec.parse(
        client === 'chat'
          ? { model: 'r', messages: [], stream: true, stream_options: { include_usage: true } }
          : client === 'messages'
            ? { model: 'r', messages: [], stream: true }
            : { model: 'r', input: 'x', stream: true },
        {},
      );
      if (!parsed.ok) throw new Error(parsed.message);
      const renderer = codec.renderer(parsed.request, parsed.request.model);
      // One event at a time, as a stream delivers them.
      const bytes =
        partsOf(CONVERSATION)
          .map((part) => renderer.render([part]))
          .join('') + renderer.end();
      expect(normalise(decode(wire, bytes))).toEqual(normalise(CONVERSATION));
    });
  }
});
