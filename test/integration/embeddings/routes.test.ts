import { Ollama } from 'ollama';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { completion } from '../../helpers/fake-upstream.js';
import { llamaEmbeddings, ollamaEmbed } from '../../helpers/embedding-upstream.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();

function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** `chat` (with a catch-all alias, the default route) and `embed` on one server of `type`. */
async function twoKinds(type: 'openai' | 'ollama', embedTier: Record<string, unknown> = {}) {
  const fake = await h.fake();
  const proxy = await h.proxy(
    stringify({
      version: 1,
      server: { port: 0 },
      providers: { box: { type, base_url: type === 'openai' ? fake.url : `http://127.0.0.1:${fake.port}` } },
      default_route: 'chat',
      routes: {
        chat: { aliases: ['*'], tiers: [{ provider: 'box', model: 'qwen' }] },
        embed: { kind: 'embeddings', aliases: ['nomic-embed-text'], tiers: [{ provider: 'box', model: 'nomic-embed-text', ...embedTier }] },
      },
    }),
  );
  return { fake, proxy };
}

describe('a route answers one kind of request', () => {
  it('chat to an embeddings route and embeddings to a chat route are 400s naming the route’s kind, in each protocol’s shape', async () => {
    const { fake, proxy } = await twoKinds('openai');
    const chat = await post(proxy.origin, '/v1/chat/completions', { model: 'embed', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: 'wrong_route_kind',
      type: 'invalid_request_error',
      message:
        'route "embed" is an embeddings route (kind: embeddings, space "nomic-embed-text"): it answers embedding requests (POST /v1/embeddings, /api/embed, /v1beta/models/embed:embedContent), not chat',
    });
    const embeddings = await post(proxy.origin, '/v1/embeddings', { model: 'chat', input: 'x' });
    expect(embeddings.status).toBe(400);
    expect(((await embeddings.json()) as { error: { message: string } }).error.message).toBe(
      'route "chat" is a chat route: embeddings need a route of kind: embeddings: name one of the embeddings routes (embed)',
    );
    const ollamaChat = await post(proxy.origin, '/api/chat', { model: 'embed', messages: [{ role: 'user', content: 'hi' }], stream: false });
    expect(ollamaChat.status).toBe(400);
    expect(((await ollamaChat.json()) as { error: string }).error).toContain('is an embeddings route');
    await expect(new Ollama({ host: proxy.origin }).embed({ model: 'chat', input: 'x' })).rejects.toMatchObject({ status_code: 400 });
    expect(fake.requests).toHaveLength(0);
    const logged = proxy.logs.filter((l) => l.event === 'request');
    expect(logged.map((l) => [l.route, l.status, l.outcome])).toEqual([
      ['embed', 400, 'bad_request'],
      ['chat', 400, 'bad_request'],
      ['embed', 400, 'bad_request'],
      ['chat', 400, 'bad_request'],
    ]);
  });

  it('a chat route’s catch-all alias and the default route take no embeddings: an embeddings route’s alias does; unknown names are 404', async () => {
    const { fake, proxy } = await twoKinds('openai');
    fake.always((ctx) => (ctx.req.url?.endsWith('/embeddings') ? llamaEmbeddings({ width: 4 })(ctx) : ctx.json(200, completion('hi'))));
    const byAlias = await post(proxy.origin, '/v1/embeddings', { model: 'nomic-embed-text', input: 'x' });
    expect(byAlias.status).toBe(200);
    expect(byAlias.headers.get('x-llm-route-route')).toBe('embed');
    const unknown = await post(proxy.origin, '/v1/embeddings', { model: 'text-embedding-3-small', input: 'x' });
    expect(unknown.status).toBe(404);
    // A chat request naming the embedding model's alias is still chat's (its `*`).
    const chat = await post(proxy.origin, '/v1/chat/completions', { model: 'nomic-embed-text', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-llm-route-route')).toBe('chat');
  });
});

describe('inputs longer than the tier’s window (fit)', () => {
  const LONG = 'word '.repeat(60).trim();

  it('are cut to the window when the client allows it (Ollama’s truncate, default true); the log says how many', async () => {
    const { fake, proxy } = await twoKinds('ollama', { context: 16 });
    fake.always(ollamaEmbed({ width: 4 }));
    const answer = await new Ollama({ host: proxy.origin }).embed({ model: 'embed', input: ['short', LONG] });
    expect(answer.embeddings).toHaveLength(2);
    const sent = fake.requests[0].body.input as string[];
    expect(sent[0]).toBe('short');
    expect(LONG.startsWith(sent[1])).toBe(true);
    expect(sent[1].split(' ').length).toBeLessThanOrEqual(16);
    expect(sent[1].split(' ').length).toBeGreaterThan(8);
    expect(proxy.logs.find((l) => l.event === 'request')).toMatchObject({ embeddings: { inputs: 2, width: 4, cut: 1 } });
  });

  it('else a 400 before any tier is tried: truncate false, or an OpenAI client', async () => {
    const { fake, proxy } = await twoKinds('ollama', { context: 16 });
    await expect(new Ollama({ host: proxy.origin }).embed({ model: 'embed', input: ['short', LONG], truncate: false })).rejects.toMatchObject({
      status_code: 400,
    });
    const openai = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: ['short', LONG] });
    expect(openai.status).toBe(400);
    const error = ((await openai.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('context_length_exceeded');
    expect(error.message).toMatch(/^prompt is too long: 6\d tokens > 16 maximum; an embeddings input is cut to fit only when the client allows it/);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('model lists say what an embeddings route is', () => {
  it('/api/tags and /api/show: capability embedding (not completion); /v1/models: capabilities [embedding]', async () => {
    const { proxy } = await twoKinds('openai', { context: 8192 });
    const tags = (await (await fetch(`${proxy.origin}/api/tags`)).json()) as { models: { name: string; capabilities: string[] }[] };
    expect(tags.models.find((m) => m.name === 'embed')?.capabilities).toEqual(['embedding']);
    expect(tags.models.find((m) => m.name === 'chat')?.capabilities).toContain('completion');
    const show = (await new Ollama({ host: proxy.origin }).show({ model: 'embed' })) as unknown as {
      capabilities: string[];
      model_info: Record<string, unknown>;
    };
    expect(show.capabilities).toEqual(['embedding']);
    expect(show.model_info['llm-route.context_length']).toBe(8192);
    const models = (await (await fetch(`${proxy.baseURL}/models`)).json()) as { data: Record<string, unknown>[] };
    expect(models.data.find((m) => m.id === 'embed')).toMatchObject({ capabilities: ['embedding'], context_window: 8192 });
    expect(models.data.find((m) => m.id === 'chat')).not.toHaveProperty('capabilities');
  });
});

describe('a token count', () => {
  it('for an embeddings route is a 400 naming its kind, in Anthropic’s shape', async () => {
    const { fake, proxy } = await twoKinds('openai');
    const res = await fetch(`${proxy.origin}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'embed', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('is an embeddings route') },
    });
    expect(fake.requests).toHaveLength(0);
  });
});
