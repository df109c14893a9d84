import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { completion } from '../../helpers/fake-upstream.js';
import { openaiError, useHarness } from '../../helpers/harness.js';
import { configYaml, type RunningProxy } from '../../helpers/proxy.js';

const h = useHarness();

function post(p: RunningProxy, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${p.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function answering(): Promise<{ p: RunningProxy; upstream: Awaited<ReturnType<typeof h.fake>> }> {
  const upstream = await h.fake();
  upstream.always((ctx) => ctx.json(200, completion('hello')));
  return { p: await h.proxy({ tiers: [{ name: 'local', url: upstream.url }] }), upstream };
}

describe('un-prefixed paths are the /v1 endpoints', () => {
  it('the OpenAI SDK with a base URL without /v1: chat completions and the model list', async () => {
    const { p, upstream } = await answering();
    const sdk = new OpenAI({ baseURL: p.origin, apiKey: 'x', maxRetries: 0 });
    const answer = await sdk.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).toBe('hello');
    expect(upstream.requests[0].url).toBe('/v1/chat/completions');
    expect((await sdk.models.list()).data.map((m) => m.id)).toEqual(['chat']);
  });

  it('/responses, /messages and /messages/count_tokens answer in their own protocols', async () => {
    const { p } = await answering();
    const responses = await post(p, '/responses', { model: 'chat', input: 'hi' });
    expect(responses.status).toBe(200);
    expect(((await responses.json()) as { object: string }).object).toBe('response');

    const messages = await post(
      p,
      '/messages',
      { model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      { 'anthropic-version': '2023-06-01' },
    );
    expect(messages.status).toBe(200);
    expect(((await messages.json()) as { type: string }).type).toBe('message');

    const counted = await post(p, '/messages/count_tokens', { model: 'chat', messages: [{ role: 'user', content: 'hello there' }] });
    expect(counted.status).toBe(200);
    expect(((await counted.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);

    // An error on an un-prefixed Messages path is Anthropic's shape, as under /v1.
    const bad = await post(p, '/messages', { model: 'chat' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { type: string }).type).toBe('error');
  });

  it('other paths are still unknown: 404 naming the endpoints', async () => {
    const { p } = await answering();
    const res = await post(p, '/completions', { model: 'chat', prompt: 'hi' });
    expect(res.status).toBe(404);
    expect(openaiError(await res.json()).message).toMatch(/no endpoint POST \/completions/);
    expect((await post(p, '/v1/v1/chat/completions', {})).status).toBe(404);
  });
});

describe('default_route', () => {
  it('takes a request without model, or with a model no route or alias matches', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('fallback')));
    const p = await h.proxy({ tiers: [{ name: 'local', url: upstream.url }], top: { default_route: 'chat' } });
    const missing = await post(p, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    expect(missing.status).toBe(200);
    expect(missing.headers.get('x-llm-route-route')).toBe('chat');
    const unknown = await post(p, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get('x-llm-route-route')).toBe('chat');
    expect(upstream.requests.map((r) => r.body.model)).toEqual(['local-model', 'local-model']);
  });

  it('without it: 400 for a missing model, 404 for an unknown one, as before', async () => {
    const { p } = await answering();
    const missing = await post(p, '/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    expect(missing.status).toBe(400);
    expect(openaiError(await missing.json()).message).toMatch(/"model" is required/);
    const unknown = await post(p, '/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBe(404);
  });

  it('must name a route: validate says which ones there are', () => {
    const yaml = configYaml({ tiers: [{ name: 'local', url: 'http://127.0.0.1:1/v1' }], top: { default_route: 'chta' } });
    expect(() => loadConfigText(yaml, '/t/llm-route.yaml', {})).toThrow(/default_route "chta" is not a route; routes: chat/);
  });
});
