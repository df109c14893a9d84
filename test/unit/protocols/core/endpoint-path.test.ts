import { describe, expect, it } from 'vitest';
import { callsUnder, modelInPath, templateOf } from '../../../../src/protocols/core/endpoint-path.js';
import { codecOfPath, matchEndpoint, servesPath } from '../../../../src/protocols/registry.js';

const GENERATE = templateOf('/v1beta/models/{model}:generateContent')!;
const MODEL = templateOf('/v1beta/models/{model}')!;

describe('endpoint paths that name the route', () => {
  it('an exact path has no template; a template is its head and its tail', () => {
    expect(templateOf('/v1/chat/completions')).toBeNull();
    expect(GENERATE).toEqual({ head: '/v1beta/models/', tail: ':generateContent' });
  });

  it.each([
    ['/v1beta/models/chat:generateContent', 'chat'],
    ['/v1beta/models/qwen2.5-coder:14b:generateContent', 'qwen2.5-coder:14b'],
    ['/v1beta/models/local%40background:generateContent', 'local@background'],
    ['/v1beta/models/models%2Fchat:generateContent', 'chat'],
    ['/v1beta/models/org%2Fmodel:generateContent', 'org/model'],
    ['/v1beta/models/a/b:generateContent', 'a/b'],
  ])('%s names %s', (path, model) => {
    expect(modelInPath(GENERATE, path)).toBe(model);
  });

  it.each([
    '/v1beta/models/:generateContent',
    '/v1beta/models/chat:streamGenerateContent',
    '/v1/models/chat:generateContent',
    '/v1beta/models/%E0%A4%A:generateContent',
    '/v1beta/models/models%2F:generateContent',
  ])('%s names no route through :generateContent', (path) => {
    expect(modelInPath(GENERATE, path)).toBeUndefined();
  });

  it("a model's own path: any name, a colon included, but not a method call", () => {
    expect(modelInPath(MODEL, '/v1beta/models/qwen2.5:7b')).toBe('qwen2.5:7b');
    expect(modelInPath(MODEL, '/v1beta/models/llama3:8b-instruct-q4_K_M')).toBe('llama3:8b-instruct-q4_K_M');
    expect(modelInPath(MODEL, '/v1beta/models/chat:embedContent')).toBeUndefined();
    expect(callsUnder(GENERATE, '/v1beta/models/chat:embedContent')).toBe(true);
    expect(callsUnder(GENERATE, '/v1beta/cachedContents')).toBe(false);
  });

  it("the registry: Gemini's paths reach its codec with the route; /v1/models is Gemini's only for a Gemini client", () => {
    const query = new URLSearchParams();
    expect(matchEndpoint('/v1beta/models/chat:streamGenerateContent', {}, query)).toMatchObject({ model: 'chat', codec: { protocol: 'gemini' } });
    expect(matchEndpoint('/v1/models/chat:countTokens', {}, query)?.endpoint.serves).toBe('token_count');
    expect(matchEndpoint('/v1/models', {}, query)).toBeUndefined();
    expect(matchEndpoint('/v1/models', { 'x-goog-api-key': 'k' }, query)?.codec.protocol).toBe('gemini');
    expect(matchEndpoint('/v1/models', {}, new URLSearchParams('key=k'))?.codec.protocol).toBe('gemini');
    expect(matchEndpoint('/v1/models/chat', { 'x-goog-api-client': 'google-genai-sdk/2.32.0' }, query)?.model).toBe('chat');
    expect(matchEndpoint('/v1/chat/completions', {}, query)?.codec.protocol).toBe('chat');
    expect(servesPath('/v1/models/chat:generateContent')).toBe(true);
    expect(codecOfPath('/v1beta/files').protocol).toBe('gemini');
    expect(codecOfPath('/v1/models/chat:embedContent').protocol).toBe('gemini');
    expect(codecOfPath('/v1/models/chat').protocol).toBe('chat');
    expect(codecOfPath('/v1/models/chat', { 'x-goog-api-key': 'k' }).protocol).toBe('gemini');
  });
});
