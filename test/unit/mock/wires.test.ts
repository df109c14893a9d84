import { describe, expect, it } from 'vitest';
import { anthropicApi, anthropicWire } from '../../../src/mock/anthropic.js';
import { ollamaApi, ollamaWire } from '../../../src/mock/ollama.js';
import { openaiApi, openaiWire } from '../../../src/mock/openai.js';
import { type Answer, completionWords, countWords, type Facts, type MockWire, toolTokens } from '../../../src/mock/wire.js';

const WORDS = completionWords('local-a', 4);

function answerTo(wire: MockWire, body: unknown, tokens = WORDS.length): Answer {
  const request = wire.read(body, 'fallback');
  if (typeof request === 'string') throw new Error(request);
  return { sequence: 7, request, tokens, startedAt: performance.now() };
}

/** The whole stream of an answer, as a client reads it. */
function streamOf(wire: MockWire, answer: Answer): string {
  const frames = wire.frames(answer);
  return frames.open + WORDS.map((_, i) => frames.content(i)).join('') + frames.end();
}

/** The JSON of each SSE event's data (the [DONE] sentinel left out). */
const sseData = (text: string): Record<string, unknown>[] =>
  text
    .split('\n\n')
    .filter((e) => e !== '')
    .map(
      (e) =>
        e
          .split('\n')
          .find((l) => l.startsWith('data: '))
          ?.slice(6) ?? '',
    )
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d) as Record<string, unknown>);

const facts = (endpoint: unknown, body: unknown = {}, rest = ''): Facts => (endpoint as { facts: (b: unknown, r: string) => Facts }).facts(body, rest);

describe('the words of an answer', () => {
  it('name the mock first, then one word a token, cycling through its sentence', () => {
    expect(WORDS).toEqual(['[local-a]', ' hello', ' from', ' a']);
    expect(completionWords('m', 40)).toHaveLength(40);
    expect(completionWords('m', 0)).toEqual([]);
  });

  it('count a prompt roughly: words of texts and message contents, and a token per 4 characters of tool JSON', () => {
    expect(countWords('two  words')).toBe(2);
    expect(
      countWords([
        { role: 'user', content: 'one two three' },
        { role: 'user', content: [{ type: 'text', text: 'four' }] },
      ]),
    ).toBe(4);
    expect(countWords({ role: 'user' })).toBe(0);
    expect(countWords(42)).toBe(0);
    const tools = [{ type: 'function', function: { name: 'read_file' } }];
    expect(toolTokens(tools)).toBe(Math.ceil(JSON.stringify(tools).length / 4));
    expect(toolTokens([])).toBe(0);
  });
});

describe('OpenAI Chat Completions', () => {
  const wire = openaiWire('local-a', WORDS);
  const body = { model: 'gpt-x', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'say hi' }] };

  it('streams chunks whose deltas add up to the answer, then the finish, the usage asked for and [DONE]', () => {
    const text = streamOf(wire, answerTo(wire, body));
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = sseData(text) as Array<{
      id: string;
      model: string;
      system_fingerprint: string;
      choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
      usage?: unknown;
    }>;
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('[local-a] hello from a');
    expect(new Set(chunks.map((c) => c.id))).toEqual(new Set(['chatcmpl-mock7']));
    expect(chunks[0]).toMatchObject({ model: 'gpt-x', system_fingerprint: 'local-a' });
    expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 } });
    const withoutUsage = sseData(streamOf(wire, answerTo(wire, { ...body, stream_options: undefined })));
    expect(withoutUsage.some((c) => 'usage' in c)).toBe(false);
  });

  it('answers whole, reads a bad body as a problem, and words errors as OpenAI does', () => {
    const whole = JSON.parse(wire.frames(answerTo(wire, { messages: [] })).whole());
    expect(whole).toMatchObject({
      object: 'chat.completion',
      model: 'fallback',
      choices: [{ message: { content: '[local-a] hello from a' }, finish_reason: 'stop' }],
    });
    expect(wire.read([], 'm')).toBe('the request body must be a JSON object');
    expect(wire.read({ model: 'm' }, 'm')).toBe('messages: expected an array of chat messages');
    expect(JSON.parse(wire.error(429, 'slow down'))).toEqual({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null } });
    expect(JSON.parse(wire.error(503, 'down', 'overloaded')).error).toMatchObject({ type: 'server_error', code: 'overloaded' });
    const malformed = wire.frames(answerTo(wire, body)).malformed();
    expect(malformed.startsWith('data: {"id":"chatcmpl-mock7"')).toBe(true);
    expect(() => JSON.parse(malformed.slice(6))).toThrow(SyntaxError); // cut off mid-JSON, as --malformed-rate means
  });

  it('lists its one model, and any model id asked for', () => {
    const api = openaiApi('local-a', WORDS);
    expect(api.basePath).toBe('/v1');
    expect(facts(api.endpoints['/v1/models'])).toEqual({ status: 200, json: { object: 'list', data: [expect.objectContaining({ id: 'local-a' })] } });
    expect(facts(api.endpoints['/v1/models/'], {}, 'other')).toMatchObject({ json: { id: 'other' } });
  });
});

describe('Anthropic Messages', () => {
  const wire = anthropicWire(WORDS);

  it('streams the event sequence of api.anthropic.com, text deltas adding up to the answer', () => {
    const events = sseData(
      streamOf(wire, answerTo(wire, { model: 'claude-x', max_tokens: 100, stream: true, system: 'be brief', messages: [{ role: 'user', content: 'say hi' }] })),
    );
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      ...WORDS.map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.map((e) => (e.delta as { text?: string } | undefined)?.text ?? '').join('')).toBe('[local-a] hello from a');
    expect(events[0]).toMatchObject({ message: { id: 'msg_mock7', model: 'claude-x', usage: { input_tokens: 4 } } });
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4 } });
  });

  it('needs max_tokens, words errors by status as Anthropic does, and counts tokens', () => {
    expect(wire.read({ model: 'c', messages: [] }, 'm')).toBe('max_tokens: Field required');
    expect(JSON.parse(wire.error(529, 'busy'))).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'busy' },
      request_id: 'req_llmroutemock',
    });
    expect(JSON.parse(wire.error(502, 'x')).error.type).toBe('api_error');
    const api = anthropicApi('local-a', WORDS);
    expect(facts(api.endpoints['/v1/messages/count_tokens'], { messages: [{ role: 'user', content: 'a b c' }] })).toEqual({
      status: 200,
      json: { input_tokens: 3 },
    });
    expect(facts(api.endpoints['/v1/messages/count_tokens'], {}).status).toBe(400);
  });
});

describe('Ollama', () => {
  it('streams NDJSON lines whose pieces add up to the answer, the last one done with its counts', () => {
    const wire = ollamaWire(WORDS, 'chat');
    const answer = answerTo(wire, { model: 'qwen3:8b', messages: [{ role: 'user', content: 'say hi' }] });
    expect(answer.request.stream).toBe(true); // Ollama streams unless told not to
    const lines = streamOf(wire, answer)
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) =>
          JSON.parse(l) as {
            model: string;
            message: { content: string };
            done: boolean;
            done_reason?: string;
            eval_count?: number;
            prompt_eval_count?: number;
          },
      );
    expect(lines.map((l) => l.message.content).join('')).toBe('[local-a] hello from a');
    expect(lines.map((l) => l.done)).toEqual([false, false, false, false, true]);
    expect(lines.at(-1)).toMatchObject({ model: 'qwen3:8b', done_reason: 'stop', eval_count: 4, prompt_eval_count: 2 });
  });

  it("writes /api/generate's pieces in response, with the tokens as context", () => {
    const wire = ollamaWire(WORDS, 'generate');
    const done = JSON.parse(wire.frames(answerTo(wire, { model: 'm', prompt: 'say hi', stream: false })).whole());
    expect(done).toMatchObject({ response: '[local-a] hello from a', done: true, context: [1, 2, 3, 4, 5, 6] });
    expect(wire.read({ model: 'm' }, 'x')).toBe('prompt: expected a string');
    expect(wire.read({ prompt: 'p' }, 'x')).toBe('model is required');
  });

  it('has one model, tagged :latest when its name has no tag, and answers show for a model named', () => {
    const api = ollamaApi('local-a', WORDS);
    expect(facts(api.endpoints['/api/tags'])).toMatchObject({ json: { models: [{ name: 'local-a:latest' }] } });
    expect(facts(api.endpoints['/api/show'], { model: 'x' })).toMatchObject({ status: 200, json: { model_info: { 'llama.context_length': 32768 } } });
    expect(facts(api.endpoints['/api/show'], {})).toEqual({ status: 400, json: { error: 'model is required' } });
    expect(JSON.parse(api.error(404, 'no such model'))).toEqual({ error: 'no such model' });
  });
});
