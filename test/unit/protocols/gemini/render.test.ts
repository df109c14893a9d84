import { describe, expect, it } from 'vitest';
import type { StreamPart } from '../../../../src/protocols/core/stream-part.js';
import { geminiRelay } from '../../../../src/protocols/gemini/relay.js';
import { type AnswerShape, GeminiRenderer, renderGeminiResponse } from '../../../../src/protocols/gemini/render.js';
import { newFacts } from '../../../../src/protocols/core/event-facts.js';
import { RAW } from '../../../../src/protocols/core/stream-output.js';

const SSE: AnswerShape = { sse: true, thoughts: true, ids: false };
const TRICKY = 'a "quoted" line\nwith \\ and ü and \u2028 and </script>';

/** The data of each SSE event, parsed. */
function events(text: string): Array<Record<string, unknown>> {
  expect(text.endsWith('\r\n\r\n')).toBe(true);
  return text
    .split('\r\n\r\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice(6)) as Record<string, unknown>;
    });
}

describe("Gemini's chunks from stream parts", () => {
  it('text and thought parts, field by field as Gemini writes them; the text exactly as it came', () => {
    const renderer = new GeminiRenderer('chat', SSE, 'resp1');
    const parts: StreamPart[] = [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: TRICKY },
    ];
    const text = renderer.render(parts);
    expect(text.startsWith('data: {"candidates":[{"content":{"parts":[{"text":"hmm","thought":true},{"text":')).toBe(true);
    const [chunk] = events(text);
    expect(Object.keys(chunk)).toEqual(['candidates', 'modelVersion', 'responseId']);
    expect(chunk).toEqual({
      candidates: [{ content: { parts: [{ text: 'hmm', thought: true }, { text: TRICKY }], role: 'model' }, index: 0 }],
      modelVersion: 'chat',
      responseId: 'resp1',
    });
    expect(renderer.render([{ type: 'text-delta', id: 't', delta: '' }])).toBe('');
  });

  it('a tool call whole once its arguments are complete (no id unless the client uses ids), and the last chunk STOP with usageMetadata', () => {
    const renderer = new GeminiRenderer('chat', SSE, 'r');
    expect(renderer.render([{ type: 'tool-input-start', id: 'call_1', toolName: 'get_weather' }])).toBe('');
    expect(renderer.render([{ type: 'tool-input-delta', id: 'call_1', delta: '{"city":' }])).toBe('');
    const call = events(
      renderer.render([
        { type: 'tool-input-delta', id: 'call_1', delta: '"Oslo"}' },
        { type: 'tool-input-end', id: 'call_1' },
      ]),
    );
    expect(call[0].candidates).toEqual([{ content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }], role: 'model' }, index: 0 }]);
    renderer.render([
      { type: 'finish', reason: 'tool_calls' },
      { type: 'usage', usage: { prompt_tokens: 9, completion_tokens: 3, cached_tokens: 4 } },
    ]);
    const [last] = events(renderer.end());
    expect(Object.keys(last)).toEqual(['candidates', 'usageMetadata', 'modelVersion', 'responseId']);
    expect(last.candidates).toEqual([{ content: { parts: [{ text: '' }], role: 'model' }, finishReason: 'STOP', index: 0 }]);
    expect(last.usageMetadata).toEqual({ promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12, cachedContentTokenCount: 4 });

    const withIds = new GeminiRenderer('chat', { ...SSE, ids: true }, 'r');
    withIds.render([{ type: 'tool-input-start', id: 'call_2', toolName: 'f' }]);
    const [named] = events(withIds.render([{ type: 'tool-input-end', id: 'call_2' }]));
    expect(named.candidates).toEqual([{ content: { parts: [{ functionCall: { name: 'f', args: {}, id: 'call_2' } }], role: 'model' }, index: 0 }]);
  });

  it('thoughts are left out unless the client asked to see them; a length finish is MAX_TOKENS, a filtered one SAFETY', () => {
    const renderer = new GeminiRenderer('chat', { ...SSE, thoughts: false }, 'r');
    expect(renderer.render([{ type: 'reasoning-delta', id: 'r', delta: 'secret' }])).toBe('');
    renderer.render([{ type: 'finish', reason: 'length' }]);
    expect((events(renderer.end())[0].candidates as Array<{ finishReason: string }>)[0].finishReason).toBe('MAX_TOKENS');
    const filtered = new GeminiRenderer('chat', SSE, 'r');
    filtered.render([{ type: 'finish', reason: 'content_filter' }]);
    expect((events(filtered.end())[0].candidates as Array<{ finishReason: string }>)[0].finishReason).toBe('SAFETY');
  });

  it('the JSON-array form: `[` then `\\r\\n,\\r\\n` between chunks and `\\r\\n]` at the end, valid JSON whole; a broken one ends with the error object', () => {
    const renderer = new GeminiRenderer('chat', { ...SSE, sse: false }, 'r');
    const first = renderer.render([{ type: 'text-delta', id: 't', delta: 'a' }]);
    expect(first.startsWith('[{"candidates"')).toBe(true);
    const second = renderer.render([{ type: 'text-delta', id: 't', delta: 'b' }]);
    expect(second.startsWith('\r\n,\r\n{"candidates"')).toBe(true);
    const whole = first + second + renderer.end();
    expect(whole.endsWith('\r\n]')).toBe(true);
    expect((JSON.parse(whole) as unknown[]).length).toBe(3);

    const broken = new GeminiRenderer('chat', { ...SSE, sse: false }, 'r');
    const text = broken.render([{ type: 'text-delta', id: 't', delta: 'a' }]) + broken.error('upstream stalled');
    const array = JSON.parse(text) as Array<Record<string, unknown>>;
    expect(array.at(-1)).toEqual({ error: { code: 503, message: 'llm-route: upstream stalled', status: 'UNAVAILABLE' } });
  });

  it("an SSE stream that cannot go on ends with one error event: Google's error object, nothing after", () => {
    const renderer = new GeminiRenderer('chat', SSE, 'r');
    renderer.render([{ type: 'text-delta', id: 't', delta: 'a' }]);
    expect(events(renderer.error('idle for 30000 ms'))).toEqual([{ error: { code: 503, message: 'llm-route: idle for 30000 ms', status: 'UNAVAILABLE' } }]);
  });

  it('carries on a relayed stream: its response id and model version, its array already open', () => {
    const renderer = new GeminiRenderer('chat', { ...SSE, sse: false }, 'mine');
    renderer.continueAs({ responseId: 'theirs', modelVersion: 'gemini-2.5-flash', opened: true });
    const text = renderer.render([{ type: 'text-delta', id: 't', delta: 'x' }]);
    expect(text.startsWith('\r\n,\r\n')).toBe(true);
    expect(JSON.parse(text.slice(5))).toMatchObject({ modelVersion: 'gemini-2.5-flash', responseId: 'theirs' });
  });

  it('a whole answer: thought, text and call parts in order, the finish, usage, model version and the response id', () => {
    const answer = JSON.parse(
      renderGeminiResponse(
        {
          id: 'chatcmpl-1',
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'text', text: 'Calling.' },
            { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}' },
          ],
          finishReason: 'tool_calls',
          usage: { prompt_tokens: 5, completion_tokens: 2 },
        },
        'chat',
        SSE,
      ),
    );
    expect(answer).toEqual({
      candidates: [
        {
          content: { parts: [{ text: 'hmm', thought: true }, { text: 'Calling.' }, { functionCall: { name: 'f', args: { a: 1 } } }], role: 'model' },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7 },
      modelVersion: 'chat',
      responseId: 'chatcmpl-1',
    });
  });
});

describe('a relay from a gemini tier', () => {
  const event = (json: unknown) => Buffer.from(`data: ${JSON.stringify(json)}\r\n\r\n`);

  it('with alt=sse: every event as it came, nothing added at the end', () => {
    const relay = geminiRelay(true);
    expect(relay.event(newFacts(), event({ a: 1 }))).toBe(RAW);
    expect(relay.complete(false)).toBeNull();
  });

  it("without alt=sse: each event's data as it came, an element of one JSON array; the upstream's error chunk as its last element", () => {
    const relay = geminiRelay(false);
    const out = [relay.event(newFacts(), event({ n: 1 })), relay.event(newFacts(), Buffer.from(': keep-alive\n\n')), relay.event(newFacts(), event({ n: 2 }))];
    expect(relay.keepAlive(Buffer.from(': ping\n\n'))).toBeNull();
    const error = relay.upstreamError(event({ error: { code: 500, message: 'x', status: 'INTERNAL' } }), newFacts());
    const text = Buffer.concat([...(out.filter((piece) => piece !== null) as Buffer[]), error]).toString();
    expect(text).toBe('[{"n":1}\r\n,\r\n{"n":2}\r\n,\r\n{"error":{"code":500,"message":"x","status":"INTERNAL"}}\r\n]');
    expect(JSON.parse(text)).toHaveLength(3);
  });
});
