import { describe, expect, it } from 'vitest';
import { collapseWhitespace, whitespaceSaver } from '../../../src/savers/whitespace.js';
import { contentTokens } from '../../../src/savers/view.js';
import { frozen, o200k, run } from './helpers.js';

describe('collapseWhitespace', () => {
  it('line-end spaces, runs of blank lines, runs of spaces between words, CRLF, leading and trailing blank space', () => {
    expect(collapseWhitespace('\n\nHello   world.  \r\n\r\n\r\n\r\nNext\t \nline   end   \n\n')).toBe('Hello world.\n\nNext\nline end');
  });

  it('keeps indentation and tab-separated columns (cat -n output, nested lists)', () => {
    const text = '     1\t    def f():\n     2\t        return 1\n  - nested  item\n\tcol1\tcol2';
    expect(collapseWhitespace(text)).toBe('     1\t    def f():\n     2\t        return 1\n  - nested item\n\tcol1\tcol2');
  });

  it('never touches a fenced code block, closed or not', () => {
    const text = 'a  b\n\n\n\n```py\nx  =  1   \n\n\n\ny\n```\n\n\n\nc  d\n~~~\nopen    fence   \n\n\n';
    expect(collapseWhitespace(text)).toBe('a b\n\n```py\nx  =  1   \n\n\n\ny\n```\n\nc d\n~~~\nopen    fence   \n\n\n');
  });

  it('never empties a text (an empty text block is an error for Anthropic)', () => {
    expect(collapseWhitespace('   \n\n  ')).toBe('   \n\n  ');
    expect(collapseWhitespace('')).toBe('');
  });
});

describe('the whitespace saver', () => {
  const body = () => ({
    model: 'chat',
    messages: [
      { role: 'system', content: 'Be   helpful.\n\n\n\nBe brief.   ' },
      { role: 'user', content: [{ type: 'text', text: 'Look   at\n\n\n\nthis:  \n```\nkeep    me\n```' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{ "a":   1 }' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'a    b\n\n\n\nc   ' },
    ],
  });

  it('tidies prose, leaves tool outputs and tool-call arguments alone by default, and measures the saving', async () => {
    const original = frozen(body());
    const result = await run('chat', original, [whitespaceSaver({ tool_results: false })]);
    const messages = result.body.messages as Array<Record<string, unknown>>;
    expect(messages[0].content).toBe('Be helpful.\n\nBe brief.');
    expect(messages[1].content).toEqual([{ type: 'text', text: 'Look at\n\nthis:\n```\nkeep    me\n```' }]);
    expect(messages[2]).toEqual(body().messages[2]);
    expect(messages[3].content).toBe('a    b\n\n\n\nc   ');
    const count = (await o200k()).count;
    expect(result.measures).toEqual([
      { saver: 'whitespace', before: contentTokens('chat', original, count), after: contentTokens('chat', result.body, count) },
    ]);
    expect(result.measures[0].after).toBeLessThan(result.measures[0].before);
  });

  it('with tool_results: true, tool outputs too', async () => {
    const result = await run('chat', body(), [whitespaceSaver({ tool_results: true })]);
    expect((result.body.messages as Array<Record<string, unknown>>)[3].content).toBe('a b\n\nc');
  });

  it('nothing to tidy: not applied, the body passed in comes back, the saving is 0', async () => {
    const clean = { model: 'chat', messages: [{ role: 'user', content: 'Already tidy.' }] };
    const result = await run('chat', clean, [whitespaceSaver({ tool_results: true })]);
    expect(result.body).toBe(clean);
    expect(result.changed).toBe(false);
    expect(result.measures).toEqual([{ saver: 'whitespace', before: 3, after: 3 }]);
  });
});
