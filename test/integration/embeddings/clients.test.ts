import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { llamaEmbeddings, ollamaEmbed, openaiEmbeddings, vectorBase64, vectorFor } from '../../helpers/embedding-upstream.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();

/** An embeddings route `embed` on one tier of `type`, beside a chat route. */
async function embedProxy(type: 'openai' | 'ollama', tier: Record<string, unknown> = {}) {
  const fake = await h.fake();
  const url = type === 'openai' ? fake.url : `http://127.0.0.1:${fake.port}`;
  const yaml = stringify({
    version: 1,
    server: { port: 0 },
    providers: { box: { type, base_url: url } },
    routes: {
      chat: { tiers: [{ provider: 'box', model: 'qwen' }] },
      embed: { kind: 'embeddings', tiers: [{ provider: 'box', model: 'nomic-embed-text', ...tier }] },
    },
  });
  const proxy = await h.proxy(yaml);
  return { fake, proxy };
}

function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** The body the fake wrote for its request at `index` (its own script, run again on what it received). */
function sentBody(fake: FakeUpstream, index: number, script: (ctx: never) => void): string {
  let written = '';
  const ctx = { body: fake.requests[index].body, res: { writeHead: () => undefined, end: (text: string) => (written = text) } };
  script(ctx as never);
  return written;
}

const TEXTS = ['def add(a, b):', 'return a + b', '# a comment', 'class Point:'];

describe('an OpenAI client on an openai tier (relayed)', () => {
  it('the openai SDK (base64 by default) gets the vectors in order, and the answer is the upstream bytes, only its model named for the tier', async () => {
    const { fake, proxy } = await embedProxy('openai');
    fake.always(llamaEmbeddings({ width: 16 }));
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const answer = await client.embeddings.create({ model: 'embed', input: TEXTS });
    expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    // The SDK decodes base64 as little-endian float32: the exact numbers the server computed.
    expect(answer.data.map((d) => Array.from(d.embedding))).toEqual(TEXTS.map((text) => vectorFor(text, 16)));
    expect(answer.usage).toEqual({ prompt_tokens: 13, total_tokens: 13 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].url).toBe('/v1/embeddings');
    expect(fake.requests[0].body).toEqual({ model: 'nomic-embed-text', input: TEXTS, encoding_format: 'base64' });

    const raw = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: TEXTS, encoding_format: 'base64' });
    expect(raw.headers.get('x-llm-route-tier')).toBe('box');
    expect(await raw.text()).toBe(sentBody(fake, 1, llamaEmbeddings({ width: 16 })));
  });

  it('floats, one text, token ids and arrays of them go as the client wrote them; /embeddings without /v1 too', async () => {
    const { fake, proxy } = await embedProxy('openai');
    fake.always(openaiEmbeddings({ width: 4 }));
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const floats = await client.embeddings.create({ model: 'embed', input: 'hello', encoding_format: 'float', dimensions: 4, user: 'u1' });
    expect(floats.data[0].embedding).toEqual(vectorFor('hello', 4));
    expect(fake.requests[0].body).toEqual({ model: 'nomic-embed-text', input: 'hello', encoding_format: 'float', dimensions: 4, user: 'u1' });

    const tokens = await post(proxy.origin, '/embeddings', { model: 'embed', input: [[101, 102], [7]] });
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { data: { embedding: number[] }[] };
    expect(body.data.map((d) => d.embedding)).toEqual([vectorFor('101,102', 4), vectorFor('7', 4)]);
    expect(fake.requests[1].body.input).toEqual([[101, 102], [7]]);
    await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: [5, 6, 7] });
    expect(fake.requests[2].body.input).toEqual([5, 6, 7]);
  });

  it('bad input is a 400 in OpenAI’s shape before any tier is asked', async () => {
    const { fake, proxy } = await embedProxy('openai');
    for (const [body, message] of [
      [{ model: 'embed' }, 'input is required'],
      [{ model: 'embed', input: [] }, 'input must not be an empty array'],
      [{ model: 'embed', input: ['a', ''] }, 'input[1] must not be an empty string'],
      [{ model: 'embed', input: ['a', 3] }, 'input[1] must be a string or an array of token ids'],
      [{ model: 'embed', input: [1.5] }, 'token ids are integers'],
      [{ model: 'embed', input: 'a', encoding_format: 'int8' }, 'encoding_format must be "float" or "base64"'],
      [{ model: 'embed', input: 'a', dimensions: 0 }, 'dimensions must be an integer ≥ 1'],
    ] as const) {
      const res = await post(proxy.origin, '/v1/embeddings', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      const error = ((await res.json()) as { error: { message: string; type: string } }).error;
      expect(error.type).toBe('invalid_request_error');
      expect(error.message).toContain(message);
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe('an Ollama client on an ollama tier (relayed)', () => {
  it('ollama-js embed gets the vectors as Ollama wrote them; the tier gets its model, keep_alive and num_ctx, the client’s truncate and options', async () => {
    const { fake, proxy } = await embedProxy('ollama', { ollama: { num_ctx: 2048, keep_alive: '10m' } });
    fake.always(ollamaEmbed({ width: 8 }));
    const ollama = new Ollama({ host: proxy.origin });
    const answer = await ollama.embed({ model: 'embed', input: TEXTS, truncate: false, options: { temperature: 0 } });
    expect(answer.embeddings).toEqual(TEXTS.map((text) => vectorFor(text, 8)));
    expect(answer.prompt_eval_count).toBe(13);
    expect(fake.requests[0].url).toBe('/api/embed');
    expect(fake.requests[0].body).toEqual({
      model: 'nomic-embed-text',
      input: TEXTS,
      truncate: false,
      options: { temperature: 0, num_ctx: 2048 },
      keep_alive: '10m',
    });
    const raw = await post(proxy.origin, '/api/embed', { model: 'embed', input: 'one' });
    expect(await raw.text()).toBe(sentBody(fake, 1, ollamaEmbed({ width: 8 })));
  });

  it('the older /api/embeddings answers one `embedding`, from the tier’s /api/embed; an empty prompt or input asks no tier', async () => {
    const { fake, proxy } = await embedProxy('ollama');
    fake.always(ollamaEmbed({ width: 8 }));
    const ollama = new Ollama({ host: proxy.origin });
    const legacy = await ollama.embeddings({ model: 'embed', prompt: 'hello' });
    expect(legacy).toEqual({ embedding: vectorFor('hello', 8) });
    expect(fake.requests[0].url).toBe('/api/embed');
    expect(fake.requests[0].body).toEqual({ model: 'nomic-embed-text', truncate: true, input: ['hello'] });
    expect(await ollama.embeddings({ model: 'embed', prompt: '' })).toEqual({ embedding: [] });
    expect((await ollama.embed({ model: 'embed', input: '' })).embeddings).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('translated: an Ollama client on an openai tier, an OpenAI client on an ollama tier', () => {
  it('ollama-js gets Ollama’s shape from an openai tier’s vectors, in input order', async () => {
    const { fake, proxy } = await embedProxy('openai');
    fake.always(llamaEmbeddings({ width: 8 }));
    const ollama = new Ollama({ host: proxy.origin });
    const answer = await ollama.embed({ model: 'embed', input: TEXTS });
    expect(answer.model).toBe('embed');
    expect(answer.embeddings).toEqual(TEXTS.map((text) => vectorFor(text, 8)));
    expect(answer.prompt_eval_count).toBe(13);
    expect(answer.total_duration).toBeGreaterThan(0);
    expect(fake.requests[0].body).toEqual({ model: 'nomic-embed-text', input: TEXTS });
  });

  it('the openai SDK gets base64 (and floats when it asks) from an ollama tier; token ids are no text for Ollama: 400', async () => {
    const { fake, proxy } = await embedProxy('ollama');
    fake.always(ollamaEmbed({ width: 8 }));
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const decoded = await client.embeddings.create({ model: 'embed', input: TEXTS });
    expect(decoded.data.map((d) => Array.from(d.embedding))).toEqual(TEXTS.map((text) => vectorFor(text, 8)));
    const raw = (await (await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: TEXTS, encoding_format: 'base64' })).json()) as {
      data: { embedding: string; index: number; object: string }[];
      model: string;
      object: string;
    };
    expect(raw.object).toBe('list');
    expect(raw.model).toBe('embed');
    expect(raw.data.map((d) => d.embedding)).toEqual(TEXTS.map((text) => vectorBase64(vectorFor(text, 8))));
    expect(fake.requests[0].body).toEqual({ model: 'nomic-embed-text', truncate: false, input: TEXTS });

    const tokens = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: [[1, 2]] });
    expect(tokens.status).toBe(400);
    expect(((await tokens.json()) as { error: { message: string } }).error.message).toContain("Ollama's /api/embed takes texts, not token ids");
    expect(fake.requests).toHaveLength(2);
  });
});
