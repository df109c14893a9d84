import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { OllamaRenderer, renderOllamaResponse } from '../../../../src/protocols/ollama/render.js';

/** Ollama's lines as its server marshals them (api/types.go: model, created_at, message | response, thinking, done, done_reason, metrics). */
const parse = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const TRICKY = 'a "quoted" line\nwith \\ and ü and \u2028 and </script>';

describe("Ollama's lines from stream parts", () => {
  it('chat: text and thinking lines, field by field; the text exactly as it came, whatever its characters', () => {
    const renderer = new OllamaRenderer('chat', 'chat', performance.now());
    const parts: StreamPart[] = [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: TRICKY },
      { type: 'text-delta', id: 't', delta: '' },
    ];
    const lines = parse(renderer.render(parts));
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0])).toEqual(['model', 'created_at', 'message', 'done']);
    expect(lines[0]).toMatchObject({ model: 'chat', message: { role: 'assistant', content: '', thinking: 'hmm' }, done: false });
    expect(lines[1].message).toEqual({ role: 'assistant', content: TRICKY });
    expect(new Date(lines[1].created_at as string).toISOString()).toBe(lines[1].created_at);
    renderer.render([
      { type: 'finish', reason: 'length' },
      { type: 'usage', usage: { prompt_tokens: 9, completion_tokens: 3 } },
    ]);
    const [last] = parse(renderer.end());
    expect(Object.keys(last)).toEqual([
      'model',
      'created_at',
      'message',
      'done',
      'done_reason',
      'total_duration',
      'load_duration',
      'prompt_eval_count',
      'prompt_eval_duration',
      'eval_count',
      'eval_duration',
    ]);
    expect(last).toMatchObject({ done: true, done_reason: 'length', prompt_eval_count: 9, eval_count: 3 });
  });

  it('generate: `response` (and `thinking`) at the top; a tool call whole, once its arguments are complete; a broken stream ends in one error line', () => {
    const renderer = new OllamaRenderer('m', 'generate', performance.now());
    const lines = parse(
      renderer.render([
        { type: 'text-delta', id: 't', delta: TRICKY },
        { type: 'reasoning-delta', id: 'r', delta: 'so' },
      ]),
    );
    expect(lines).toEqual([
      { model: 'm', created_at: expect.any(String), response: TRICKY, done: false },
      { model: 'm', created_at: expect.any(String), response: '', thinking: 'so', done: false },
    ]);
    const chat = new OllamaRenderer('m', 'chat', performance.now());
    expect(
      chat.render([
        { type: 'tool-input-start', id: 'call_1', toolName: 'f' },
        { type: 'tool-input-delta', id: 'call_1', delta: '{"a":' },
      ]),
    ).toBe('');
    const [call] = parse(
      chat.render([
        { type: 'tool-input-delta', id: 'call_1', delta: '1}' },
        { type: 'tool-input-end', id: 'call_1' },
      ]),
    );
    expect(call.message).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'call_1', function: { index: 0, name: 'f', arguments: { a: 1 } } }] });
    expect(parse(chat.error('the tier stalled'))).toEqual([{ error: 'llm-route: the tier stalled' }]);
  });

  it('a whole answer: one object, tool calls with arguments as objects, done_reason stop after them', () => {
    const body = JSON.parse(
      renderOllamaResponse(
        {
          content: [
            { type: 'reasoning', text: 'think' },
            { type: 'text', text: 'ok' },
            { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"x":[1]}' },
          ],
          finishReason: 'tool_calls',
          usage: { prompt_tokens: 4, completion_tokens: 2 },
        },
        'chat',
        'chat',
        performance.now(),
      ),
    );
    expect(body).toMatchObject({
      model: 'chat',
      message: { role: 'assistant', content: 'ok', thinking: 'think', tool_calls: [{ id: 'c1', function: { index: 0, name: 'f', arguments: { x: [1] } } }] },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 4,
      eval_count: 2,
    });
  });
});
