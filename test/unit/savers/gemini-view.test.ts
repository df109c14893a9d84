import { describe, expect, it } from 'vitest';
import { detectProtocol } from '../../../src/savers/detect-protocol.js';
import { trimHistorySaver } from '../../../src/savers/trim-history.js';
import { truncateToolOutputSaver } from '../../../src/savers/truncate-tool-output.js';
import { contentTokens, viewOf } from '../../../src/savers/view.js';
import { logLines, o200k, run } from './helpers.js';

/** A Gemini conversation as Gemini CLI sends one: calls without ids in the first turn, with ids later; responses' `output`. */
function geminiBody(tag = (s: string) => s) {
  return {
    systemInstruction: { parts: [{ text: 'You are an agent.' }] },
    generationConfig: { temperature: 0 },
    contents: [
      { role: 'user', parts: [{ text: tag('u1') }] },
      {
        role: 'model',
        parts: [
          { text: 'thinking', thought: true },
          { functionCall: { name: 'run', args: { cmd: 'ls' } }, thoughtSignature: 'c2ln' },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'run', response: { output: tag('t1') } } }] },
      { role: 'model', parts: [{ functionCall: { id: 'run_2', name: 'run', args: { cmd: 'pwd' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'run_2', name: 'run', response: { output: tag('t2') } } }] },
      { role: 'user', parts: [{ text: tag('u2') }] },
    ],
  };
}

describe("the savers' view of a Gemini body", () => {
  it('texts as slots (never a thought), calls and responses paired by id or by name and order, a response that answers calls a tool message', () => {
    const view = viewOf('gemini', geminiBody())!;
    expect(view.messages.map((m) => [m.role, m.parts.map((p) => p.text), m.calls, m.answers, m.fixedTexts])).toEqual([
      ['system', ['You are an agent.'], [], [], []],
      ['user', ['u1'], [], [], []],
      ['assistant', [], ['call_0'], [], ['{"cmd":"ls"}']],
      ['tool', ['t1'], [], ['call_0'], []],
      ['assistant', [], ['run_2'], [], ['{"cmd":"pwd"}']],
      ['tool', ['t2'], [], ['run_2'], []],
      ['user', ['u2'], [], [], []],
    ]);
    expect(view.messages[3].parts[0].toolResult).toBe('call_0');
  });

  it('truncate_tool_output shortens a long function response in place; trim_history keeps each call with its response', async () => {
    const { count } = await o200k();
    const long = geminiBody((tag) => (tag === 't1' ? `t1: ${logLines(400)}` : tag));
    const truncated = await run('gemini', long, [truncateToolOutputSaver({ max_tokens: 200 })]);
    const response = (truncated.body.contents as Array<{ parts: Array<{ functionResponse?: { response: { output: string } } }> }>)[2].parts[0].functionResponse;
    const sent = long.contents[2].parts[0] as { functionResponse: { response: { output: string } } };
    expect(response?.response.output.length).toBeLessThan(sent.functionResponse.response.output.length);
    expect(response?.response.output.startsWith('t1: ')).toBe(true);

    const big = (tag: string) => `${tag}: ${logLines(20)}`;
    const body = geminiBody(big);
    const lastTwo = contentTokens('gemini', { contents: body.contents.slice(4) }, count);
    const trimmed = await run('gemini', body, [trimHistorySaver({ max_tokens: lastTwo + 20, keep_last: 2 })]);
    const kept = (trimmed.body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>).map(
      (c) => `${c.role}:${Object.keys(c.parts.at(-1) ?? {})[0]}`,
    );
    expect(kept).toEqual(['user:text', 'model:functionCall', 'user:functionResponse', 'user:text']);
    expect(trimmed.body.generationConfig).toEqual({ temperature: 0 });
  });

  it("detection: `contents` is Gemini's own", () => {
    expect(detectProtocol(geminiBody())).toBe('gemini');
    expect(detectProtocol({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).toBe('chat');
  });
});
