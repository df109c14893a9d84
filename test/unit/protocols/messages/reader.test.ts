import { describe, expect, it } from 'vitest';
import { EVENT_DONE } from '../../../../src/protocols/core/event-facts.js';
import { committed, read } from '../read-parts.js';

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
