import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../../../src/savers/fences.js';
import { truncateText, truncateToolOutputSaver } from '../../../src/savers/truncate-tool-output.js';
import { logLines, o200k, run } from './helpers.js';

const MARKER = /\[\.\.\. (\d+) tokens truncated \.\.\.\]/;

describe('truncateText', () => {
  it('keeps a head and a tail within the budget around a marker saying how many tokens were cut', async () => {
    const { count } = await o200k();
    const log = logLines(400);
    const total = count(log);
    const out = truncateText(log, 300, count);
    expect(count(out)).toBeLessThanOrEqual(300);
    const match = MARKER.exec(out)!;
    const head = out.slice(0, match.index);
    const tail = out.slice(match.index + match[0].length);
    expect(head.length).toBeGreaterThan(0);
    expect(tail.length).toBeGreaterThan(0);
    expect(log.startsWith(head)).toBe(true);
    expect(log.endsWith(tail)).toBe(true);
    // the marker sits on a line of its own: the cuts fell on line breaks
    expect(out.slice(match.index - 1, match.index + match[0].length + 1)).toMatch(/^\n\[.*\]\n$/);
    const cut = Number(match[1]);
    expect(cut).toBe(total - count(head) - count(tail));
    expect(cut).toBeGreaterThan(total - 300);
  });

  it('returns the text itself when it fits', async () => {
    const { count } = await o200k();
    expect(truncateText('short', 100, count)).toBe('short');
  });

  it('a fenced block is kept whole or cut whole, never cut into', async () => {
    const { count } = await o200k();
    const fence = `\`\`\`\n${logLines(120, 'CODE')}\n\`\`\``;
    const text = `${logLines(40)}\n${fence}\n${logLines(40)}`;
    for (const budget of [200, 500, 1200, 2600]) {
      const out = truncateText(text, budget, count);
      expect(count(out)).toBeLessThanOrEqual(budget);
      for (const block of fencedBlocks(out)) expect(fencedBlocks(text)).toContain(block);
      expect(out).toMatch(/tokens truncated/);
    }
  });

  it('a text that is one big fenced block leaves only the marker', async () => {
    const { count } = await o200k();
    const text = `\`\`\`\n${logLines(300, 'CODE')}\n`; // unclosed: runs to the end
    expect(truncateText(text, 100, count)).toMatch(/^\[\.\.\. \d+ tokens truncated \.\.\.\]$/);
  });
});

describe('truncate_tool_output', () => {
  it('cuts long tool results of each protocol, leaves short ones and ordinary messages alone', async () => {
    const { count } = await o200k();
    const long = logLines(300);
    const saver = truncateToolOutputSaver({ max_tokens: 200 });
    const chat = await run(
      'chat',
      {
        messages: [
          { role: 'user', content: long },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } },
              { id: 'c2', type: 'function', function: { name: 'y', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'c1', content: long },
          { role: 'tool', tool_call_id: 'c2', content: 'ok' },
        ],
      },
      [saver],
    );
    const contents = (chat.body.messages as Array<{ content: string }>).map((m) => m.content);
    expect(contents[0]).toBe(long);
    expect(count(contents[2])).toBeLessThanOrEqual(200);
    expect(contents[2]).toMatch(/tokens truncated/);
    expect(contents[3]).toBe('ok');

    const anthropic = await run(
      'messages',
      {
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [
                  { type: 'text', text: long },
                  { type: 'text', text: long },
                ],
                is_error: true,
              },
            ],
          },
        ],
      },
      [saver],
    );
    const parts = (anthropic.body.messages as Array<{ content: Array<{ content: Array<{ text: string }>; is_error: boolean }> }>)[0].content[0];
    expect(parts.is_error).toBe(true);
    expect(parts.content.map((p) => count(p.text)).reduce((a, b) => a + b)).toBeLessThanOrEqual(200); // shared budget

    const responses = await run('responses', { input: [{ type: 'function_call_output', call_id: 'c', output: long }] }, [saver]);
    expect(count((responses.body.input as Array<{ output: string }>)[0].output)).toBeLessThanOrEqual(200);
    expect(responses.measures[0].before - responses.measures[0].after).toBeGreaterThan(count(long) - 200 - 1);
  });
});
