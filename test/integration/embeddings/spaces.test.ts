import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { llamaEmbeddings, llamaEmbeddingsOff, ollamaEmbed, vectorFor } from '../../helpers/embedding-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';

const h = useHarness();

function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Route `embed` with `tiers` (each `{ provider, model, … }`) over `providers`, and a chat route. */
async function proxyWith(providers: Record<string, unknown>, tiers: Record<string, unknown>[], route: Record<string, unknown> = {}) {
  return h.proxy(
    stringify({
      version: 1,
      server: { port: 0 },
      providers,
      routes: { chat: { tiers: [{ provider: Object.keys(providers)[0], model: 'qwen' }] }, embed: { kind: 'embeddings', ...route, tiers } },
    }),
  );
}

const TEXTS = ['alpha', 'beta', 'gamma'];

describe('failover inside a vector space', () => {
  it('both client protocols get their vectors in order through a failing first tier of the same space', async () => {
    const llama = await h.fake();
    const ollama = await h.fake();
    llama.always(llamaEmbeddingsOff); // llama-server without --embeddings: 501, the tier's fault
    ollama.always(ollamaEmbed({ width: 8 }));
    const proxy = await proxyWith({ box: { type: 'openai', base_url: llama.url }, oll: { type: 'ollama', base_url: `http://127.0.0.1:${ollama.port}` } }, [
      { name: 'box', provider: 'box', model: 'nomic-embed-text-v1.5.Q8_0.gguf', space: 'nomic-embed-text' },
      { name: 'oll', provider: 'oll', model: 'nomic-embed-text' },
    ]);
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const openai = await client.embeddings.create({ model: 'embed', input: TEXTS });
    expect(openai.data.map((d) => Array.from(d.embedding))).toEqual(TEXTS.map((t) => vectorFor(t, 8)));
    const viaOllama = await new Ollama({ host: proxy.origin }).embed({ model: 'embed', input: TEXTS });
    expect(viaOllama.embeddings).toEqual(TEXTS.map((t) => vectorFor(t, 8)));
    expect(llama.requests).toHaveLength(2);
    expect(ollama.requests).toHaveLength(2);
    const line = proxy.logs.filter((l) => l.event === 'request').at(-1) ?? {};
    expect(line).toMatchObject({ route: 'embed', tier: 'oll', outcome: 'ok', embeddings: { inputs: 3, width: 8 } });
    expect((line.attempts as { tier: string; outcome: string; status?: number }[]).map((a) => [a.tier, a.outcome, a.status])).toEqual([
      ['box', 'unsupported', 501],
      ['oll', 'ok', 200],
    ]);
  });

  it('no tier of the space answers: 503 naming the space, in each client’s shape', async () => {
    const proxy = await proxyWith({ dead: { type: 'ollama', base_url: DEAD_URL } }, [{ provider: 'dead', model: 'nomic-embed-text' }]);
    const openai = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: 'x' });
    expect(openai.status).toBe(503);
    const error = ((await openai.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('space_unavailable');
    expect(error.message).toMatch(/^no tier of vector space "nomic-embed-text" \(route "embed"\) could answer, and vectors of another space are never served/);
    const ollama = await post(proxy.origin, '/api/embed', { model: 'embed', input: 'x' });
    expect(ollama.status).toBe(503);
    expect(((await ollama.json()) as { error: string }).error).toContain('vector space "nomic-embed-text"');
  });
});

describe("the space's width", () => {
  it('the first answer fixes it; a tier that answers another width fails (dimension_mismatch) and its vectors never reach the client', async () => {
    const first = await h.fake();
    const other = await h.fake();
    other.always(llamaEmbeddings({ width: 16, salt: 7 }));
    first.next(llamaEmbeddings({ width: 8 }));
    first.always((ctx) => ctx.error(503, 'loading model'));
    const proxy = await proxyWith({ a: { type: 'openai', base_url: first.url }, b: { type: 'openai', base_url: other.url } }, [
      { name: 'a', provider: 'a', model: 'm', retry: { attempts: 1 } },
      { name: 'b', provider: 'b', model: 'm', space: 'm' },
    ]);
    const fixed = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: TEXTS });
    expect(fixed.status).toBe(200);
    const refused = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: TEXTS });
    expect(refused.status).toBe(503);
    const body = await refused.text();
    expect(body).toContain('dimension_mismatch');
    // Tier b answered, with other numbers: none of them reached the client.
    expect(other.requests).toHaveLength(1);
    expect(body).not.toContain(String(vectorFor('alpha', 16, 7)[0]));
    const line = proxy.logs.filter((l) => l.event === 'request').at(-1) as { attempts: { tier: string; outcome: string; message?: string }[] };
    expect(line.attempts.map((a) => [a.tier, a.outcome])).toEqual([
      ['a', 'server_error'],
      ['b', 'dimension_mismatch'],
    ]);
    expect(line.attempts[1].message).toBe('16-wide vectors, where space "m" answers 8-wide ones: another model, not delivered');
  });

  it('a request that asks for `dimensions` takes only vectors of that width', async () => {
    const fake = await h.fake();
    fake.always(llamaEmbeddings({ width: 8 })); // a server that ignores `dimensions`
    const proxy = await proxyWith({ box: { type: 'openai', base_url: fake.url } }, [{ provider: 'box', model: 'm' }]);
    const res = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: 'x', dimensions: 4 });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('8-wide vectors, where the request asked for dimensions: 4');
    expect(fake.requests[0].body.dimensions).toBe(4);
  });
});

describe('batches', () => {
  it('a batch larger than max_batch is split in order and joined: indexes renumbered, tokens summed; one request at a time', async () => {
    const fake = await h.fake();
    fake.always(llamaEmbeddings({ width: 4 }));
    const proxy = await proxyWith({ box: { type: 'openai', base_url: fake.url } }, [{ provider: 'box', model: 'm', max_batch: 3 }]);
    const texts = Array.from({ length: 10 }, (_, i) => `chunk number ${i}`);
    const res = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: texts, user: 'indexer' });
    const answer = (await res.json()) as { data: { index: number; embedding: number[] }[]; usage: { prompt_tokens: number }; model: string };
    expect(fake.requests.map((r) => r.body.input)).toEqual([texts.slice(0, 3), texts.slice(3, 6), texts.slice(6, 9), texts.slice(9)]);
    // The client's other fields go to every part of its own protocol.
    expect(fake.requests.every((r) => r.body.user === 'indexer' && r.body.model === 'm')).toBe(true);
    expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(answer.data.map((d) => d.embedding)).toEqual(texts.map((t) => vectorFor(t, 4)));
    expect(answer.usage.prompt_tokens).toBe(10 * 4);
    expect(answer.model).toBe('embed');
  });

  it('a part that fails fails the attempt: the next tier of the space takes the whole batch', async () => {
    const first = await h.fake();
    const second = await h.fake();
    first.next(llamaEmbeddings({ width: 4 }));
    first.always((ctx) => ctx.destroy());
    second.always(ollamaEmbed({ width: 4 }));
    const proxy = await proxyWith({ a: { type: 'openai', base_url: first.url }, b: { type: 'ollama', base_url: `http://127.0.0.1:${second.port}` } }, [
      { name: 'a', provider: 'a', model: 'm', max_batch: 2, retry: { attempts: 1 } },
      { name: 'b', provider: 'b', model: 'm' },
    ]);
    const texts = ['1', '2', '3', '4', '5'];
    const answer = await new Ollama({ host: proxy.origin }).embed({ model: 'embed', input: texts });
    expect(answer.embeddings).toEqual(texts.map((t) => vectorFor(t, 4)));
    expect(first.requests.map((r) => r.body.input)).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    expect(second.requests.map((r) => r.body.input)).toEqual([texts]);
  });

  it('a thousand inputs over the default max_batch: four requests of at most 256, in order', async () => {
    const fake = await h.fake();
    fake.always(ollamaEmbed({ width: 2 }));
    const proxy = await proxyWith({ oll: { type: 'ollama', base_url: `http://127.0.0.1:${fake.port}` } }, [{ provider: 'oll', model: 'm' }]);
    const texts = Array.from({ length: 1000 }, (_, i) => `t${i}`);
    const answer = await new Ollama({ host: proxy.origin }).embed({ model: 'embed', input: texts });
    expect(fake.requests.map((r) => (r.body.input as string[]).length)).toEqual([256, 256, 256, 232]);
    expect(answer.embeddings).toEqual(texts.map((t) => vectorFor(t, 2)));
  });
});
