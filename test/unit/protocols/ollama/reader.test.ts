import { describe, expect, it } from 'vitest';
import { committed, read } from '../read-parts.js';

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
