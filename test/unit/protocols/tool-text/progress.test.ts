import { describe, expect, it } from 'vitest';
import { chatClient } from '../../../../src/protocols/chat/client.js';
import { chatWire } from '../../../../src/protocols/chat/wire.js';
import { wireCodec } from '../../../../src/protocols/registry.js';
import { toolTextScope } from '../../../../src/protocols/tool-text/scope.js';
import { TextCallReader } from '../../../../src/protocols/tool-text/text-call-reader.js';
import type { WireProtocol } from '../../../../src/protocols/core/types.js';
import { EVENT_CONTENT, EVENT_PROGRESS, newFacts, type StreamReader } from '../../../../src/protocols/core/event-facts.js';
import { chunk } from '../../../helpers/fake-upstream.js';
import { CHAT_TOOLS } from '../../../helpers/tool-text-kit.js';
import { HERMES } from '../../../helpers/tool-text-forms.js';

/**
 * What ends a committed stream's silence (EVENT_PROGRESS), on every wire: the model's words,
 * its reasoning, a tool call's name and arguments, a finish, whatever field carries them — and
 * never a keep-alive: an SSE comment (the framer drops those before any reader), Anthropic's
 * ping, an empty delta, a role-only or usage-only chunk, an Ollama line with no content, a
 * Responses event that carries none.
 */

/** The flags of each payload, read in turn by one reader (one stream). */
function flagsOf(reader: StreamReader, payloads: unknown[]): number[] {
  const facts = newFacts();
  return payloads.map((payload) => {
    reader.read(typeof payload === 'string' ? payload : JSON.stringify(payload), facts);
    return facts.flags;
  });
}

const progress = (flags: number) => (flags & EVENT_PROGRESS) !== 0;

/** Keep-alives and events of structure, each after an opening that is content itself (so the reader is mid-stream). */
const KEEP_ALIVES: Record<WireProtocol, { opening: unknown[]; keepAlives: unknown[] }> = {
  chat: {
    opening: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' })],
    keepAlives: [
      chunk({}),
      chunk({ content: '' }),
      chunk({ content: null }),
      chunk({ role: 'assistant' }),
      chunk({ reasoning_content: '' }),
      { id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
      { choices: [{ delta: { reasoning_content: 'loading model…' } }] }, // llama-swap's loading progress
    ],
  },
  messages: {
    opening: [
      { type: 'message_start', message: { id: 'm', usage: { input_tokens: 5, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    ],
    keepAlives: [
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: 3 } },
    ],
  },
  ollama: {
    opening: [{ model: 'm', message: { role: 'assistant', content: 'Hi' }, done: false }],
    keepAlives: [
      { model: 'm', created_at: 't', message: { role: 'assistant', content: '' }, done: false },
      { model: 'm', created_at: 't', message: { role: 'assistant', content: '', thinking: '' }, done: false },
      { model: 'm', created_at: 't', response: '', done: false }, // /api/generate
    ],
  },
  responses: {
    opening: [
      { type: 'response.created', response: { id: 'r', status: 'in_progress' } },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg', type: 'message' } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg', delta: 'Hi' },
    ],
    keepAlives: [
      { type: 'response.in_progress', response: { id: 'r', status: 'in_progress' } },
      { type: 'response.content_part.added', output_index: 0, item_id: 'msg', part: { type: 'output_text', text: '' } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg', delta: '' },
      { type: 'response.reasoning_summary_text.delta', output_index: 0, item_id: 'msg', delta: '' },
      { type: 'response.output_text.done', output_index: 0, item_id: 'msg', text: 'Hi' },
      { type: 'response.web_search_call.searching', output_index: 1, item_id: 'ws' },
    ],
  },
  gemini: {
    opening: [{ candidates: [{ content: { parts: [{ text: 'Hi' }], role: 'model' }, index: 0 }], modelVersion: 'g', responseId: 'r' }],
    keepAlives: [
      { candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, index: 0 }], modelVersion: 'g', responseId: 'r' },
      { candidates: [{ content: { parts: [{ text: '', thought: true }], role: 'model' }, index: 0 }], modelVersion: 'g', responseId: 'r' },
      { candidates: [{ content: { parts: [{ thoughtSignature: 'c2ln' }], role: 'model' }, index: 0 }], modelVersion: 'g', responseId: 'r' },
      { candidates: [{ content: { role: 'model' }, index: 0 }], modelVersion: 'g', responseId: 'r' },
      { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 1, totalTokenCount: 6 }, modelVersion: 'g', responseId: 'r' },
    ],
  },
};

/** What carries progress on each wire: text, reasoning, a tool call's start and arguments, a finish. */
const PROGRESS: Record<WireProtocol, unknown[]> = {
  chat: [
    chunk({ content: 'word' }),
    chunk({ reasoning_content: 'thinking' }),
    chunk({ reasoning: 'thinking' }),
    chunk({ refusal: 'no' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'ls', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
    chunk({ function_call: { name: 'legacy', arguments: '{}' } }),
    chunk({}, 'stop'),
  ],
  messages: [
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'word' } },
    { type: 'content_block_delta', index: 1, delta: { type: 'thinking_delta', thinking: 'hm' } },
    { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} } },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"pa' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'citations_delta', citation: {} } },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
  ],
  ollama: [
    { model: 'm', message: { role: 'assistant', content: 'word' }, done: false },
    { model: 'm', message: { role: 'assistant', content: '', thinking: 'hm' }, done: false },
    { model: 'm', message: { role: 'assistant', content: '', tool_calls: [{ function: { name: 'ls', arguments: { path: '.' } } }] }, done: false },
    { model: 'm', response: 'word', done: false },
    { model: 'm', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 3 },
  ],
  responses: [
    { type: 'response.output_text.delta', output_index: 0, item_id: 'msg', delta: 'word' },
    { type: 'response.reasoning_summary_text.delta', output_index: 1, item_id: 'rs', delta: 'hm' },
    { type: 'response.output_item.added', output_index: 2, item: { type: 'function_call', call_id: 'call_1', name: 'ls' } },
    { type: 'response.function_call_arguments.delta', output_index: 2, item_id: 'fc', delta: '{"pa' },
    { type: 'response.completed', response: { id: 'r', status: 'completed', output: [], usage: null } },
  ],
  gemini: [
    { candidates: [{ content: { parts: [{ text: 'word' }], role: 'model' }, index: 0 }] },
    { candidates: [{ content: { parts: [{ text: 'hm', thought: true }], role: 'model' }, index: 0 }] },
    { candidates: [{ content: { parts: [{ functionCall: { name: 'ls', args: { path: '.' } } }], role: 'model' }, index: 0 }] },
    { candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 }] },
  ],
};

const WIRES = Object.keys(KEEP_ALIVES) as WireProtocol[];

describe.each(WIRES)('%s wire', (wire) => {
  it('a keep-alive is not progress: it neither ends a silence nor counts as a gap', () => {
    const { opening, keepAlives } = KEEP_ALIVES[wire];
    const flags = flagsOf(wireCodec(wire).reader(), [...opening, ...keepAlives]);
    expect(progress(flags[opening.length - 1])).toBe(true);
    keepAlives.forEach((keepAlive, i) => expect(progress(flags[opening.length + i]), JSON.stringify(keepAlive)).toBe(false));
  });

  it('words, reasoning, a tool call and a finish are progress, whatever field carries them', () => {
    const { opening } = KEEP_ALIVES[wire];
    const flags = flagsOf(wireCodec(wire).reader(), [...opening, ...PROGRESS[wire]]);
    PROGRESS[wire].forEach((event, i) => {
      const f = flags[opening.length + i];
      expect(progress(f), JSON.stringify(event)).toBe(true);
      expect(f & EVENT_CONTENT, JSON.stringify(event)).toBeTruthy(); // progress is what commits a stream, read once
    });
  });
});

describe('a tool call written as text, held', () => {
  it('its text is progress while it is held, though it is not content yet', () => {
    const parsed = chatClient.parse({ model: 'chat', messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS }, {});
    if (!parsed.ok) throw new Error(parsed.message);
    const scope = toolTextScope(parsed.request, chatClient);
    if (!scope) throw new Error('no scope');
    const reader = new TextCallReader(chatWire.reader(), scope, { name: 'local', isLast: () => false });
    const pieces = HERMES.match(/[\s\S]{1,4}/g) ?? [];
    const flags = flagsOf(reader, [chunk({ role: 'assistant', content: '' }), ...pieces.map((content) => chunk({ content })), chunk({})]);
    const held = flags.slice(1, pieces.length); // every piece but the one that closes the form
    expect(held.every((f) => !(f & EVENT_CONTENT))).toBe(true);
    expect(held.every(progress)).toBe(true);
    expect(progress(flags[0])).toBe(false);
    expect(progress(flags.at(-1) as number)).toBe(false);
  });
});
