import { describe, expect, it } from 'vitest';
import { trimHistorySaver } from '../../../src/savers/trim-history.js';
import { contentTokens } from '../../../src/savers/view.js';
import { logLines, o200k, run } from './helpers.js';

const big = (tag: string) => `${tag}: ${logLines(20)}`; // ~400 tokens

function chatConversation() {
  return [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: big('u1') },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'run', arguments: '{}' } },
        { id: 'c2', type: 'function', function: { name: 'run', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: big('t1') },
    { role: 'tool', tool_call_id: 'c2', content: big('t2') },
    { role: 'assistant', content: big('a1') },
    { role: 'user', content: big('u2') },
    { role: 'assistant', content: big('a2') },
    { role: 'user', content: big('u3') },
  ];
}

const tags = (messages: unknown) =>
  (messages as Array<{ role: string; content: string | null }>).map((m) => (m.content === null ? `${m.role}(calls)` : m.content.split(':')[0]));

describe('trim_history', () => {
  it('drops the oldest messages until under budget, keeping the system prompt and the last keep_last', async () => {
    const { count } = await o200k();
    const messages = chatConversation();
    const lastThree = contentTokens('chat', { messages: [messages[0], ...messages.slice(6)] }, count);
    const result = await run('chat', { model: 'chat', messages }, [trimHistorySaver({ max_tokens: lastThree + 10, keep_last: 3 })]);
    expect(tags(result.body.messages)).toEqual(['You are an agent.', 'u2', 'a2', 'u3']);
    expect(result.measures[0].after).toBe(contentTokens('chat', result.body, count));
    expect(result.measures[0].after).toBe(lastThree);
  });

  it('a tool call and its results go together, and what is left opens with the user', async () => {
    const { count } = await o200k();
    const messages = chatConversation();
    const total = contentTokens('chat', { messages }, count);
    // Dropping u1 is 1 token short: the call goes with both its results, then a1 (which would open the conversation).
    const result = await run('chat', { messages }, [trimHistorySaver({ max_tokens: total - count(messages[1].content as string) - 1, keep_last: 1 })]);
    expect(tags(result.body.messages)).toEqual(['You are an agent.', 'u2', 'a2', 'u3']);
  });

  it('when a kept message would open the conversation, it trims less rather than open with an answer', async () => {
    const body = { messages: chatConversation() };
    // keep_last 6 reaches t1: the call it answers is kept too. Dropping u1 alone would open with that call.
    const kept = await run('chat', body, [trimHistorySaver({ max_tokens: 100, keep_last: 6 })]);
    expect(kept.body).toBe(body);
    expect(kept.changed).toBe(false);
    // keep_last 2 (a2, u3): trimming goes as far as u2, the last user turn before what must be kept.
    const two = await run('chat', body, [trimHistorySaver({ max_tokens: 100, keep_last: 2 })]);
    expect(tags(two.body.messages)).toEqual(['You are an agent.', 'u2', 'a2', 'u3']);
  });

  it('an agent loop (every later user turn is a tool result): the task stays, the oldest tool turns go', async () => {
    const toolTurn = (i: number) => [
      {
        role: 'assistant',
        content: [
          { type: 'text', text: `step ${i}` },
          { type: 'tool_use', id: `t${i}`, name: 'Bash', input: { n: i } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: big(`r${i}`) }] },
    ];
    const task = { role: 'user', content: 'Fix the failing tests.' };
    const last = { role: 'user', content: 'Now run them again.' };
    const body = { system: 'sys', messages: [task, ...[0, 1, 2, 3, 4].flatMap(toolTurn), last] };
    const result = await run('messages', body, [trimHistorySaver({ max_tokens: 1000, keep_last: 3 })]);
    expect(result.body.messages).toEqual([task, ...toolTurn(4), last]);
    const chat = await run(
      'chat',
      {
        messages: [
          { role: 'system', content: 'sys' },
          task,
          ...[0, 1, 2].flatMap((i) => [
            { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'f', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: `c${i}`, content: big(`r${i}`) },
          ]),
        ],
      },
      [trimHistorySaver({ max_tokens: 500, keep_last: 1 })],
    );
    expect(tags(chat.body.messages)).toEqual(['sys', 'Fix the failing tests.', 'assistant(calls)', 'r2']);
  });

  it('under budget: nothing dropped', async () => {
    const body = { messages: chatConversation() };
    const result = await run('chat', body, [trimHistorySaver({ max_tokens: 100_000, keep_last: 1 })]);
    expect(result.body).toBe(body);
  });

  it('Anthropic: an assistant tool_use and the user tool_result message answering it go together', async () => {
    const body = {
      system: 'sys',
      messages: [
        { role: 'user', content: big('u1') },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'calling' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { cmd: big('in') } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: big('r1') },
            { type: 'text', text: 'and then?' },
          ],
        },
        { role: 'assistant', content: big('a1') },
        { role: 'user', content: big('u2') },
      ],
    };
    const result = await run('messages', body, [trimHistorySaver({ max_tokens: 900, keep_last: 1 })]);
    expect(result.body).toEqual({ system: 'sys', messages: [body.messages[4]] });
  });

  it('Responses: a reasoning item stays with its function call, and the call with its output', async () => {
    const body = {
      instructions: 'sys',
      input: [
        { role: 'user', content: big('u1') },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'x' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: big('args') },
        { type: 'function_call_output', call_id: 'c1', output: big('out') },
        { role: 'user', content: big('u2') },
        { type: 'reasoning', id: 'rs_2', summary: [] },
        { type: 'function_call', call_id: 'c2', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c2', output: 'short' },
      ],
    };
    const result = await run('responses', body, [trimHistorySaver({ max_tokens: 1000, keep_last: 1 })]);
    // keep_last 1 protects the last output, hence its call and that call's reasoning item.
    expect(result.body.input).toEqual(body.input.slice(4));
  });
});
