import { describe, expect, it } from 'vitest';
import { EVENT_CONTENT, EVENT_DONE, EVENT_FINISH, EVENT_PROGRESS } from '../../../../src/protocols/core/event-facts.js';
import { committed, read } from '../read-parts.js';

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
