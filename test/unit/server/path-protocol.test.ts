import { describe, expect, it } from 'vitest';
import { codecForPath, endpointPath, MODEL_LIST_PATH } from '../../../src/server/path-protocol.js';

describe('endpointPath', () => {
  it('gives an un-prefixed alias of a /v1 endpoint its /v1, the model list included', () => {
    expect(endpointPath('/chat/completions')).toBe('/v1/chat/completions');
    expect(endpointPath('/responses')).toBe('/v1/responses');
    expect(endpointPath('/messages')).toBe('/v1/messages');
    expect(endpointPath('/embeddings')).toBe('/v1/embeddings');
    expect(endpointPath('/models')).toBe(MODEL_LIST_PATH);
  });

  it('leaves alone a /v1 path, a path of another API and a path no endpoint serves', () => {
    expect(endpointPath('/v1/chat/completions')).toBe('/v1/chat/completions');
    expect(endpointPath('/v1/nothing')).toBe('/v1/nothing');
    expect(endpointPath('/api/chat')).toBe('/api/chat');
    expect(endpointPath('/completions/x')).toBe('/completions/x');
    expect(endpointPath('/')).toBe('/');
  });
});

describe('codecForPath', () => {
  it("answers in the protocol whose endpoint or prefix the path is under, OpenAI's elsewhere", () => {
    expect(codecForPath('/v1/chat/completions').protocol).toBe('chat');
    expect(codecForPath('/chat/completions').protocol).toBe('chat');
    expect(codecForPath('/v1/responses').protocol).toBe('responses');
    expect(codecForPath('/messages').protocol).toBe('messages');
    expect(codecForPath('/v1/messages/batches').protocol).toBe('messages'); // not served, still Anthropic's shape
    expect(codecForPath('/api/chat').protocol).toBe('ollama');
    expect(codecForPath('/api/nothing').protocol).toBe('ollama');
    expect(codecForPath('/v1beta/models/gemini-pro:generateContent').protocol).toBe('gemini');
    expect(codecForPath('/v1beta/anything').protocol).toBe('gemini');
    expect(codecForPath('/nowhere').protocol).toBe('chat');
    expect(codecForPath('/v1/models').protocol).toBe('chat');
  });
});
