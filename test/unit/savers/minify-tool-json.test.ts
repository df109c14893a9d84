import { describe, expect, it } from 'vitest';
import { minifyJson, minifyToolJsonSaver } from '../../../src/savers/minify-tool-json.js';
import { run } from './helpers.js';

describe('minifyJson', () => {
  it('drops only whitespace between tokens: numbers, escapes, key order and duplicate keys stay exactly', () => {
    const text = '  {\n  "id": 12345678901234567890,\n  "x": 1.0, "y": 1e5,\n  "s": "a  b\\" \\n {  }",\n  "x": [ 1 ,\t2 ]\n}\n';
    expect(minifyJson(text)).toBe('{"id":12345678901234567890,"x":1.0,"y":1e5,"s":"a  b\\" \\n {  }","x":[1,2]}');
  });

  it('is null for what is not a JSON object or array', () => {
    for (const text of ['plain text', '"a string"', '42', '{ not json }', '[1, 2', 'function f() { return [1] }']) expect(minifyJson(text)).toBeNull();
  });
});

describe('minify_tool_json', () => {
  it('re-writes JSON tool results of each protocol compactly; other texts and non-JSON results are untouched', async () => {
    const pretty = JSON.stringify({ files: ['a.ts', 'b.ts'], total: 2, meta: { ok: true } }, null, 2);
    const chat = await run(
      'chat',
      {
        messages: [
          { role: 'user', content: pretty },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: pretty } }] },
          { role: 'tool', tool_call_id: 'c1', content: pretty },
          { role: 'tool', tool_call_id: 'c2', content: 'no json here {' },
        ],
      },
      [minifyToolJsonSaver()],
    );
    const messages = chat.body.messages as Array<Record<string, unknown>>;
    expect(messages.map((m) => m.content)).toEqual([pretty, null, '{"files":["a.ts","b.ts"],"total":2,"meta":{"ok":true}}', 'no json here {']);
    expect((messages[1].tool_calls as Array<{ function: { arguments: string } }>)[0].function.arguments).toBe(pretty);

    const anthropic = await run(
      'messages',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: pretty, cache_control: { type: 'ephemeral' } }] }],
          },
        ],
      },
      [minifyToolJsonSaver()],
    );
    expect(anthropic.body.messages).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{ type: 'text', text: JSON.stringify(JSON.parse(pretty)), cache_control: { type: 'ephemeral' } }],
          },
        ],
      },
    ]);

    const responses = await run('responses', { input: [{ type: 'function_call_output', call_id: 'c', output: pretty }] }, [minifyToolJsonSaver()]);
    expect(responses.body.input).toEqual([{ type: 'function_call_output', call_id: 'c', output: JSON.stringify(JSON.parse(pretty)) }]);
    expect(responses.measures[0].after).toBeLessThan(responses.measures[0].before);
  });
});
