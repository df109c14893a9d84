import { describe, expect, it } from 'vitest';
import { detectProtocol } from '../../../src/savers/detect-protocol.js';
import { trimHistorySaver } from '../../../src/savers/trim-history.js';
import { contentTokens, viewOf } from '../../../src/savers/view.js';
import { logLines, o200k, run } from './helpers.js';

const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** An Ollama /api/chat conversation with two calls of one tool, answered by name only (as ollama-js sends them). */
function ollamaBody(tag = (s: string) => s) {
  return {
    model: 'chat',
    options: { temperature: 0 },
    messages: [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: tag('u1'), images: [PIXEL] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'run', arguments: { cmd: 'ls' } } }] },
      { role: 'tool', content: tag('t1'), tool_name: 'run' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_b', function: { name: 'run', arguments: { cmd: 'pwd' } } }] },
      { role: 'tool', content: tag('t2'), tool_name: 'run' },
      { role: 'user', content: tag('u2') },
    ],
  };
}

describe("the savers' view of an Ollama body", () => {
  it('texts as slots, images and options left alone; calls and results paired by id, else the n-th result of a tool with its n-th call', () => {
    const view = viewOf('ollama', ollamaBody())!;
    expect(view.messages.map((m) => [m.role, m.parts.map((p) => p.text), m.calls, m.answers, m.fixedTexts])).toEqual([
      ['system', ['You are an agent.'], [], [], []],
      ['user', ['u1'], [], [], []],
      ['assistant', [''], ['tool:run#0'], [], ['{"cmd":"ls"}']],
      ['tool', ['t1'], [], ['tool:run#0'], []],
      ['assistant', [''], ['call_b', 'tool:run#1'], [], ['{"cmd":"pwd"}']],
      ['tool', ['t2'], [], ['tool:run#1'], []],
      ['user', ['u2'], [], [], []],
    ]);
    expect(view.messages[3].parts[0].toolResult).toBe('tool:run#0');
    expect(viewOf('ollama', { model: 'chat', prompt: 'a generate body' })).toBeNull();
  });

  it('trim_history keeps each call with its result (never a result without its call)', async () => {
    const { count } = await o200k();
    const big = (tag: string) => `${tag}: ${logLines(20)}`;
    const body = ollamaBody(big);
    const lastTwo = contentTokens('ollama', { messages: [body.messages[0], ...body.messages.slice(4)] }, count);
    const result = await run('ollama', body, [trimHistorySaver({ max_tokens: lastTwo + 10, keep_last: 2 })]);
    const kept = (result.body.messages as Array<{ role: string; content: string }>).map((m) => `${m.role}:${m.content.split(':')[0]}`);
    // The last two messages are t2 and u2: t2 keeps its own call (the second), the first call goes
    // with t1; the task (u1) stays to open the conversation, as trim_history keeps it for every protocol.
    expect(kept).toEqual(['system:You are an agent.', 'user:u1', 'assistant:', 'tool:t2', 'user:u2']);
    expect(result.body.options).toEqual({ temperature: 0 });
  });

  it("detection: Ollama's own fields say Ollama; a plain exchange is still Chat, a generate body none", () => {
    expect(detectProtocol(ollamaBody())).toBe('ollama');
    expect(
      detectProtocol({
        model: 'm',
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi', images: [PIXEL] },
        ],
      }),
    ).toBe('ollama');
    expect(detectProtocol({ model: 'm', think: true, messages: [{ role: 'user', content: 'hi' }] })).toBe('ollama');
    expect(detectProtocol({ model: 'm', messages: [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] }] })).toBe(
      'ollama',
    );
    expect(
      detectProtocol({ model: 'm', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{}' } }] }] }),
    ).toBe('chat');
    expect(detectProtocol({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).toBe('chat');
    expect(detectProtocol({ model: 'm', prompt: 'hi' })).toBeNull();
  });
});
