import { describe, expect, it } from 'vitest';
import { checkReadiness } from '../../../src/health/readiness.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';

/** "Can it serve?" as llama.cpp, vLLM, Ollama and other OpenAI-compatible servers answer it. */

const h = useHarness();
const target = (base_url: string) => ({ type: 'openai' as const, base_url });

describe('checkReadiness', () => {
  it('llama.cpp: 503 Loading model is loading; then /health 200 is ready', async () => {
    const llama = await FakeLlamaServer.start({ loading: true });
    h.defer(() => llama.close());
    expect(await checkReadiness(target(llama.url))).toEqual({ state: 'loading', detail: 'Loading model' });
    llama.loaded();
    expect(await checkReadiness(target(llama.url))).toEqual({ state: 'ready', via: 'GET /health 200' });
  });

  it('vLLM: /health 200 with an empty body', async () => {
    const vllm = await h.fake();
    vllm.always((ctx) => {
      if (ctx.req.url === '/health') return void ctx.res.writeHead(200).end();
      ctx.error(404, 'Not Found');
    });
    expect(await checkReadiness(target(vllm.url))).toEqual({ state: 'ready', via: 'GET /health 200' });
  });

  it('Ollama: /api/version, asked first on its usual port', async () => {
    const ollama = await h.fake();
    ollama.always((ctx) => {
      if (ctx.req.url === '/api/version') ctx.json(200, { version: '0.12.3' });
      else ctx.res.writeHead(404).end('404 page not found');
    });
    expect(await checkReadiness(target(ollama.url))).toEqual({ state: 'ready', via: 'GET /api/version 200' });
    expect(ollama.requests).toHaveLength(2); // /health, then /api/version (its port here is not 11434)
  });

  it('anything else: the model list, 200 ready, 503 loading, 401 serving, 500 not ready', async () => {
    const other = await h.fake();
    const answers = [200, 503, 401, 500];
    let current = 0;
    other.always((ctx) => {
      if (ctx.req.url !== '/v1/models') return ctx.error(404, 'not found');
      const status = answers[current];
      if (status === 200) return ctx.json(200, { object: 'list', data: [{ id: 'm', object: 'model' }] });
      return ctx.error(status, status === 503 ? 'Model is loading' : `status ${status}`);
    });
    const states = [];
    for (current = 0; current < answers.length; current++) states.push(await checkReadiness(target(other.url)));
    expect(states).toEqual([
      { state: 'ready', via: 'GET /v1/models 200' },
      { state: 'loading', detail: 'Model is loading' },
      { state: 'ready', via: 'GET /v1/models 401 (serving; the key is refused)' },
      { state: 'not_ready', detail: 'GET /v1/models answered HTTP 500: status 500' },
    ]);
  });

  it('nothing listening: down', async () => {
    expect(await checkReadiness(target(DEAD_URL))).toEqual({ state: 'down', detail: 'ECONNREFUSED' });
  });

  it('sends the provider key and headers', async () => {
    const server = await h.fake();
    server.always((ctx) => ctx.json(200, { status: 'ok' }));
    await checkReadiness({ ...target(server.url), api_key: 'sk-local', headers: { 'x-team': 'a' } });
    expect(server.requests[0].headers).toMatchObject({ authorization: 'Bearer sk-local', 'x-team': 'a' });
  });
});
