import { describe, expect, it } from 'vitest';
import { EVENT_CONTENT, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, EVENT_USAGE } from '../../../../src/protocols/core/event-facts.js';
import { read } from '../read-parts.js';
import { geminiWire } from '../../../../src/protocols/gemini/wire.js';

// Gemini's stream chunks, as generativelanguage.googleapis.com writes them, read into parts
// and commit facts; and its whole answers decoded.

const USAGE = {
  promptTokenCount: 9,
  candidatesTokenCount: 3,
  totalTokenCount: 40,
  thoughtsTokenCount: 28,
  promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }],
};

function chunk(parts: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }],
    usageMetadata: { promptTokenCount: 9, totalTokenCount: 9, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 9 }] },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'Zr1baKjJMZ3Gz7IPmc_F-Qg',
  });
}

/** Each data payload of one gemini stream, read in turn. */
const readGemini = (events: string[]) => read('gemini', events);

describe("a gemini tier's stream", () => {
  it('thought text as reasoning, text as text, each run one block; usage cumulative; the finish closes what is open', () => {
    const { parts, flags } = readGemini([
      chunk([{ text: '**Planning**\nThe user', thought: true }]),
      chunk([{ text: ' greets me.', thought: true }]),
      chunk([{ text: 'Hello' }]),
      JSON.stringify({
        candidates: [{ content: { parts: [{ text: ' there!', thoughtSignature: 'CpQBAdHtim9…' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: USAGE,
        modelVersion: 'gemini-2.5-flash',
        responseId: 'Zr1baKjJMZ3Gz7IPmc_F-Qg',
      }),
    ]);
    expect(parts.filter((p) => p.type !== 'usage')).toEqual([
      { type: 'reasoning-start', id: 'reasoning-0' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: '**Planning**\nThe user' },
      { type: 'reasoning-delta', id: 'reasoning-0', delta: ' greets me.' },
      { type: 'reasoning-end', id: 'reasoning-0' },
      { type: 'text-start', id: 'text-1' },
      { type: 'text-delta', id: 'text-1', delta: 'Hello' },
      { type: 'text-delta', id: 'text-1', delta: ' there!' },
      { type: 'text-end', id: 'text-1' },
      { type: 'finish', reason: 'stop' },
    ]);
    // Thoughts are output: 3 + 28.
    expect(parts.filter((p) => p.type === 'usage').at(-1)).toEqual({ type: 'usage', usage: { prompt_tokens: 9, completion_tokens: 31 } });
    expect(flags.every((f) => f & EVENT_CONTENT && f & EVENT_USAGE)).toBe(true);
    expect(flags.at(-1)! & EVENT_FINISH).toBe(EVENT_FINISH);
    // A thought signature is Gemini's alone: no part carries it.
    expect(JSON.stringify(parts)).not.toContain('CpQB');
  });

  it('commits on the first part with text, thought text, a call or a finish: not on empty text or a signature alone', () => {
    const { flags } = readGemini([
      chunk([{ text: '' }]),
      chunk([{ text: '', thoughtSignature: 'sig' }]),
      JSON.stringify({ usageMetadata: { promptTokenCount: 4 } }),
      chunk([{ text: 'x' }]),
    ]);
    expect(flags.map((f) => (f & EVENT_CONTENT) !== 0)).toEqual([false, false, false, true]);
    expect(readGemini([chunk([], { finishReason: 'MAX_TOKENS' })]).parts.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('function calls come whole: ids given by Gemini kept, else made from the responseId; STOP after calls is tool_calls', () => {
    const { parts } = readGemini([
      chunk([
        { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'EjQKMgG…' },
        { functionCall: { name: 'get_weather', args: { city: 'Bergen' }, id: 'fc-own-id' } },
      ]),
      chunk([{ text: '' }], { finishReason: 'STOP' }),
    ]);
    expect(parts.filter((p) => p.type !== 'usage')).toEqual([
      { type: 'tool-input-start', id: 'call_Zr1baKjJMZ3Gz7IPmc_F-Qg_0', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'call_Zr1baKjJMZ3Gz7IPmc_F-Qg_0', delta: '{"city":"Oslo"}' },
      { type: 'tool-input-end', id: 'call_Zr1baKjJMZ3Gz7IPmc_F-Qg_0' },
      { type: 'tool-input-start', id: 'fc-own-id', toolName: 'get_weather' },
      { type: 'tool-input-delta', id: 'fc-own-id', delta: '{"city":"Bergen"}' },
      { type: 'tool-input-end', id: 'fc-own-id' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('a blocked prompt is a content filter; SAFETY too; an {"error"} chunk is an error in the stream; garbage is malformed', () => {
    const blocked = readGemini([
      JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } }),
    ]);
    expect(blocked.parts.at(-1)).toEqual({ type: 'finish', reason: 'content_filter' });
    expect(readGemini([chunk([], { finishReason: 'SAFETY' })]).parts.at(-1)).toEqual({ type: 'finish', reason: 'content_filter' });
    const error = readGemini([JSON.stringify({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } })]);
    expect(error.parts).toEqual([{ type: 'error', message: 'The model is overloaded. Please try again later.' }]);
    expect(error.flags[0] & EVENT_ERROR).toBe(EVENT_ERROR);
    expect(readGemini(['{"candidates": [']).flags[0]).toBe(EVENT_MALFORMED);
  });

  it('code Gemini ran commits as content of its own kind', () => {
    const { parts, flags } = readGemini([chunk([{ executableCode: { language: 'PYTHON', code: 'print(1)' } }])]);
    expect(parts.filter((p) => p.type !== 'usage')).toEqual([{ type: 'opaque' }]);
    expect(flags[0] & EVENT_CONTENT).toBe(EVENT_CONTENT);
  });
});

describe("a gemini tier's whole answer", () => {
  const answer = (body: unknown) => geminiWire.decodeResponse(Buffer.from(JSON.stringify(body)));

  it('its parts, finish, responseId, modelVersion and usage; runs of text joined', () => {
    expect(
      answer({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'Thinking about it.', thought: true },
                { text: 'It is ' },
                { text: '5°C.', thoughtSignature: 'Cq…' },
                { functionCall: { name: 'log', args: { t: 5 } } },
              ],
            },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 6, thoughtsTokenCount: 10, cachedContentTokenCount: 8, totalTokenCount: 36 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'abc',
      }),
    ).toEqual({
      id: 'abc',
      model: 'gemini-2.5-flash',
      content: [
        { type: 'reasoning', text: 'Thinking about it.' },
        { type: 'text', text: 'It is 5°C.' },
        { type: 'tool_call', id: 'call_abc_0', name: 'log', arguments: '{"t":5}' },
      ],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 20, completion_tokens: 16, cached_tokens: 8 },
    });
  });

  it('a blocked prompt is an empty content-filtered answer; a body that is no answer is not_json', () => {
    expect(answer({ promptFeedback: { blockReason: 'SAFETY' } })).toEqual({ content: [], finishReason: 'content_filter' });
    expect(answer({ error: { code: 500 } })).toBe('not_json');
    expect(geminiWire.decodeResponse(Buffer.from('<html>'))).toBe('not_json');
  });

  it('usage read without parsing the answer', () => {
    const body = Buffer.from(JSON.stringify({ candidates: [], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } }));
    expect(geminiWire.readUsage(body)).toEqual({ prompt_tokens: 3, completion_tokens: 2 });
    expect(geminiWire.readUsage(Buffer.from('{"candidates":[]}'))).toBeUndefined();
    expect(geminiWire.readUsage(Buffer.from('not json'))).toBe('not_json');
  });
});
