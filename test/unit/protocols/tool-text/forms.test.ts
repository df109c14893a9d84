import { describe, expect, it } from 'vitest';
import { openingOf } from '../../../../src/protocols/tool-text/forms.js';
import { recoverCalls, type CallsFound } from '../../../../src/protocols/tool-text/recover.js';
import { formatOf } from '../../../../src/protocols/tool-text/forms.js';
import { HERMES, MISTRAL, MISTRAL_ARGS, PYTHON_TAG, QWEN3_XML, TOOLS } from '../../../helpers/tool-text-forms.js';

function calls(found: CallsFound): Array<{ name: string; args: unknown }> {
  if (found.kind !== 'calls') throw new Error(`not calls: ${JSON.stringify(found)}`);
  return found.segments.flatMap((s) => (s.type === 'call' ? [{ name: s.name, args: JSON.parse(s.arguments) }] : []));
}

function recover(text: string): CallsFound {
  const format = formatOf(text.trimStart());
  if (!format) throw new Error('no format');
  return recoverCalls(text, format, TOOLS);
}

describe('tool calls written as text: the forms', () => {
  it("reads each family's exact form into the same call", () => {
    for (const [text, format] of [
      [HERMES, 'hermes'],
      [MISTRAL, 'mistral'],
      [MISTRAL_ARGS, 'mistral_args'],
      [PYTHON_TAG, 'python_tag'],
    ] as const) {
      const found = recover(text);
      expect(found).toMatchObject({ kind: 'calls', format, calls: 1, repaired: false });
      expect(calls(found)).toEqual([{ name: 'Bash', args: { command: 'ls -la' } }]);
    }
  });

  it("reads Qwen3-Coder's XML, each value by its schema type (a string stays text, an integer is read)", () => {
    const found = recover(QWEN3_XML);
    expect(found).toMatchObject({ kind: 'calls', format: 'qwen3_xml', calls: 1 });
    expect(calls(found)).toEqual([{ name: 'Read', args: { file_path: '/tmp/a.txt', limit: 20 } }]);
  });

  it('reads several Hermes calls in a row, and a whole answer that is JSON, bare or fenced, one or a list', () => {
    expect(calls(recover(`${HERMES}\n${HERMES.replace('ls -la', 'pwd')}`))).toEqual([
      { name: 'Bash', args: { command: 'ls -la' } },
      { name: 'Bash', args: { command: 'pwd' } },
    ]);
    expect(calls(recover('{"name": "Bash", "arguments": {"command": "ls"}}'))).toEqual([{ name: 'Bash', args: { command: 'ls' } }]);
    expect(calls(recover('```json\n[{"name": "Bash", "parameters": {"command": "ls"}}, {"name": "Read", "arguments": {"file_path": "a"}}]\n```'))).toEqual([
      { name: 'Bash', args: { command: 'ls' } },
      { name: 'Read', args: { file_path: 'a' } },
    ]);
  });

  it('repairs what small models get wrong, and says so', () => {
    const cases: Array<[string, unknown]> = [
      ['<tool_call>\n{"name": "Bash", "arguments": {"command": "ls",}}\n</tool_call>', { command: 'ls' }], // trailing comma
      ["<tool_call>\n{'name': 'Bash', 'arguments': {'command': 'ls'}}\n</tool_call>", { command: 'ls' }], // single quotes
      ['<tool_call>\n{name: "Bash", arguments: {command: "ls"}}\n</tool_call>', { command: 'ls' }], // unquoted keys
      ['<tool_call>\n{"name": "Mode", "arguments": {"mode": "fast"}, "x": None}\n</tool_call>', { mode: 'fast' }], // Python None
      ['<tool_call>\n{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\", \\"timeout\\": \\"5\\"}"}\n</tool_call>', { command: 'ls', timeout: 5 }], // arguments as a JSON string, "5" → 5
      ['<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"', { command: 'ls' }], // left open at the end
    ];
    for (const [text, args] of cases) {
      const found = recover(text);
      expect(found, text).toMatchObject({ kind: 'calls', repaired: true });
      expect(calls(found)[0].args, text).toEqual(args);
    }
  });

  it('refuses a call the client cannot run: an unknown tool, a missing required field, a value outside an enum, a wrong type', () => {
    const bad = [
      '<tool_call>\n{"name": "Nope", "arguments": {}}\n</tool_call>',
      '<tool_call>\n{"name": "Bash", "arguments": {}}\n</tool_call>',
      '<tool_call>\n{"name": "Mode", "arguments": {"mode": "medium"}}\n</tool_call>',
      '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls", "timeout": "soon"}}\n</tool_call>',
      '<tool_call>\n<function=Read>\n</function>\n</tool_call>',
      '[TOOL_CALLS]Bash{"command": "ls"}',
    ];
    for (const text of bad) expect(recover(text).kind, text).toBe('invalid');
    expect(recover(bad[0])).toMatchObject({ message: expect.stringContaining('"Nope", which the request does not offer') });
  });

  it('leaves JSON that names no call as text (a JSON answer is not a tool call)', () => {
    expect(recover('{"answer": 42}')).toEqual({ kind: 'not_a_call' });
    expect(recover('[1, 2, 3]')).toEqual({ kind: 'not_a_call' });
  });

  it('tells an opener from a plain answer by its first characters', () => {
    expect(openingOf('Hello')).toBe('no');
    expect(openingOf('<tool_')).toBe('maybe');
    expect(openingOf('<tool_call>')).toBe('open');
    expect(openingOf('<b>bold</b>')).toBe('no');
    expect(openingOf('[TOOL')).toBe('maybe');
    expect(openingOf('[link](x)')).toBe('no');
    expect(openingOf('[ {')).toBe('open');
    expect(openingOf('``')).toBe('maybe');
    expect(openingOf('```ts')).toBe('no');
    expect(openingOf('```js')).toBe('maybe'); // it may still be ```json
    expect(openingOf('```json\n')).toBe('maybe');
    expect(openingOf('```json\n{')).toBe('open');
    expect(openingOf('```python\nprint(1)')).toBe('no');
    expect(openingOf('<|python')).toBe('maybe');
  });
});
