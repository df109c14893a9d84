import { describe, expect, it } from 'vitest';
import { EVENT_DONE, EVENT_USAGE, EVENT_USAGE_ONLY } from '../../../../src/protocols/core/event-facts.js';
import { committed, read, render } from '../read-parts.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({ id: 'c', choices: [{ index, delta, finish_reason: finish }] });

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
