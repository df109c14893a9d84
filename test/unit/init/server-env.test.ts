import { describe, expect, it } from 'vitest';
import { discoverOptionsFromEnv, ollamaOrigin } from '../../../src/init/server-env.js';
import { withArticle } from '../../../src/util/format.js';

describe('OLLAMA_HOST, read as Ollama reads it (envconfig.Host)', () => {
  it.each([
    ['127.0.0.1', 'http://127.0.0.1:11434'],
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['0.0.0.0:11500', 'http://127.0.0.1:11500'],
    [':11500', 'http://127.0.0.1:11500'],
    ['gpu-box', 'http://gpu-box:11434'],
    ['gpu-box:9000', 'http://gpu-box:9000'],
    ['[::1]:9000', 'http://[::1]:9000'],
    ['[::]:9000', 'http://[::1]:9000'],
    ['http://gpu-box', 'http://gpu-box:80'],
    ['https://ollama.example.com', 'https://ollama.example.com:443'],
    ['http://localhost:11434/', 'http://localhost:11434'],
    ['https://example.com:8443/ollama', 'https://example.com:8443/ollama'],
    ['host:notaport', 'http://host:11434'],
  ])('%s → %s', (value, origin) => {
    expect(ollamaOrigin(value)).toBe(origin);
  });
});

describe('where init looks, from the environment', () => {
  it("llm-route's own variables first, then each server's own", () => {
    expect(discoverOptionsFromEnv({})).toEqual({ host: undefined, ports: {}, origins: {} });
    expect(discoverOptionsFromEnv({ OLLAMA_HOST: ':1', LLAMA_ARG_HOST: '0.0.0.0', LLAMA_ARG_PORT: '9090' }).origins).toEqual({
      ollama: { origin: 'http://127.0.0.1:1', from: 'OLLAMA_HOST' },
      llamacpp: { origin: 'http://127.0.0.1:9090', from: 'LLAMA_ARG_HOST, LLAMA_ARG_PORT' },
    });
    expect(discoverOptionsFromEnv({ OLLAMA_HOST: ':1', LLM_ROUTE_INIT_PORTS: 'ollama=2' })).toEqual({ host: undefined, ports: { ollama: 2 }, origins: {} });
    expect(discoverOptionsFromEnv({ OLLAMA_HOST: ':1', LLM_ROUTE_INIT_HOST: 'box' }).origins).toEqual({});
    // VLLM_PORT is vLLM's internal port, not its API's: not read.
    expect(discoverOptionsFromEnv({ VLLM_PORT: '8001' })).toEqual({ host: undefined, ports: {}, origins: {} });
  });
});

describe('withArticle', () => {
  it('an before a vowel, a otherwise', () => {
    expect(['openai', 'anthropic', 'ollama', 'groq', 'deepseek'].map(withArticle)).toEqual(['an openai', 'an anthropic', 'an ollama', 'a groq', 'a deepseek']);
  });
});
