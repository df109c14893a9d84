import { describe, expect, it } from 'vitest';
import { ollamaClient, ollamaGenerateClient } from '../../../../src/protocols/ollama/client.js';
import { isZeroDuration } from '../../../../src/protocols/ollama/load.js';

/** Ollama's load request as its server tells it (server/routes.go): an empty prompt, no messages; keep_alive zero unloads. */
const chat = ollamaClient.loading!;
const generate = ollamaGenerateClient.loading!;

describe("Ollama's load request", () => {
  it('/api/generate: no prompt, or an empty one, loads; any prompt is a generation', () => {
    expect(generate.asks({ model: 'm' })).toBe('load');
    expect(generate.asks({ model: 'm', prompt: '', stream: true })).toBe('load');
    // Images, a system prompt or a suffix without a prompt still only load (Ollama looks at the prompt alone).
    expect(generate.asks({ model: 'm', system: 'be brief', images: ['aGk='] })).toBe('load');
    expect(generate.asks({ model: 'm', prompt: ' ' })).toBeUndefined();
    expect(generate.asks({ model: 'm', prompt: 'hi' })).toBeUndefined();
  });

  it('/api/chat: no messages (absent, null or empty) loads; one message is a generation', () => {
    expect(chat.asks({ model: 'm' })).toBe('load');
    expect(chat.asks({ model: 'm', messages: null })).toBe('load');
    expect(chat.asks({ model: 'm', messages: [] })).toBe('load');
    expect(chat.asks({ model: 'm', messages: [{ role: 'user', content: '' }] })).toBeUndefined();
  });

  it('keep_alive zero, as a number of seconds or as Go duration text, unloads; anything else loads', () => {
    for (const zero of [0, '0', '0s', '0m', '0h0m0s', '0.0s', '-0s', '0ms']) {
      expect(isZeroDuration(zero), String(zero)).toBe(true);
      expect(chat.asks({ model: 'm', keep_alive: zero })).toBe('unload');
    }
    for (const other of [-1, 1, 300, '5m', '-1', '1s', '', 'soon', null, undefined, false]) {
      expect(isZeroDuration(other), String(other)).toBe(false);
      expect(generate.asks({ model: 'm', keep_alive: other })).toBe('load');
    }
  });

  it("answers with Ollama's own object for each endpoint, its keys in the order Ollama writes them", () => {
    const loaded = generate.answer('coder', 'load');
    expect(Object.keys(loaded)).toEqual(['model', 'created_at', 'response', 'done', 'done_reason']);
    expect(loaded).toMatchObject({ model: 'coder', response: '', done: true, done_reason: 'load' });
    expect(Date.parse(String(loaded.created_at))).not.toBeNaN();
    const unloaded = chat.answer('coder', 'unload');
    expect(Object.keys(unloaded)).toEqual(['model', 'created_at', 'message', 'done', 'done_reason']);
    expect(unloaded).toMatchObject({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'unload' });
  });

  it('a chat body without messages is valid; messages that are not a list are still refused', () => {
    expect(ollamaClient.parse({ model: 'm' }, {}).ok).toBe(true);
    expect(ollamaClient.parse({ model: 'm', messages: null }, {}).ok).toBe(true);
    const refused = ollamaClient.parse({ model: 'm', messages: 'hi' }, {});
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining('"messages" must be an array') });
  });
});
