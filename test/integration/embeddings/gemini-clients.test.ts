import { GoogleGenAI } from '@google/genai';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { geminiBatchEmbed, llamaEmbeddings, ollamaEmbed, vectorFor } from '../../helpers/embedding-upstream.js';
import { FakeGemini, geminiEmbeddingModel } from '../../helpers/gemini-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { DEAD_URL } from '../../helpers/proxy.js';

// docs/embeddings.md: a Gemini client (@google/genai 2.32.0) gets its vectors from every tier type
// of the route's space, through a first tier that fails; a gemini tier is sent what the client wrote.

const h = useHarness();
const KEY = 'AIza-embed-key-0123456789';
const MODEL = 'gemini-embedding-001';
const TEXTS = ['alpha', 'beta', 'gamma'];

type TierKind = 'openai' | 'ollama' | 'gemini';

/** Route `embed` (space `docs`): a dead openai tier, then one tier of `kind` on a fake; and a chat route. */
async function behindDeadTier(kind: TierKind) {
  const fake = await h.fake();
  const gemini = kind === 'gemini' ? new FakeGemini(fake, [geminiEmbeddingModel(MODEL)]) : undefined;
  if (gemini) {
    gemini.keys = [KEY];
    gemini.always(geminiBatchEmbed({ width: 8 }));
  } else {
    fake.always(kind === 'openai' ? llamaEmbeddings({ width: 8 }) : ollamaEmbed({ width: 8 }));
  }
  const base = { openai: fake.url, ollama: `http://127.0.0.1:${fake.port}`, gemini: gemini?.url };
  const proxy = await h.proxy(
    stringify({
      version: 1,
      server: { port: 0 },
      providers: { dead: { type: 'openai', base_url: DEAD_URL }, up: { type: kind, base_url: base[kind], ...(gemini ? { api_key: KEY } : {}) } },
      routes: {
        chat: { tiers: [{ provider: 'dead', model: 'qwen' }] },
        embed: {
          kind: 'embeddings',
          space: 'docs',
          tiers: [
            { name: 'first', provider: 'dead', model: 'embed-local', space: 'docs' },
            { name: 'second', provider: 'up', model: kind === 'gemini' ? MODEL : 'embed-model', space: 'docs' },
          ],
        },
      },
    }),
  );
  return { fake, proxy, ai: new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: proxy.origin } }) };
}

/** The embeddings requests a fake got (not a check's model list or a model's entry). */
function posts(fake: FakeUpstream) {
  return fake.requests.filter((request) => /(:batchEmbedContents|\/embeddings|\/api\/embed)$/.test(request.url));
}

describe('@google/genai embedContent through a failing first tier', () => {
  it.each(['openai', 'ollama'] as const)('to an %s tier: the vectors in input order; taskType and title are not sent', async (kind) => {
    const { fake, proxy, ai } = await behindDeadTier(kind);
    const res = await ai.models.embedContent({ model: 'embed', contents: TEXTS, config: { taskType: 'RETRIEVAL_DOCUMENT', title: 'Notes' } });
    expect(res.embeddings?.map((embedding) => embedding.values)).toEqual(TEXTS.map((text) => vectorFor(text, 8)));
    const [sent] = posts(fake);
    expect(sent.body.input).toEqual(TEXTS);
    expect(sent.body.model).toBe('embed-model');
    expect(JSON.stringify(sent.body)).not.toMatch(/taskType|title|RETRIEVAL/);
    const line = proxy.logs.filter((l) => l.event === 'request').at(-1) ?? {};
    expect(line).toMatchObject({ route: 'embed', protocol: 'gemini', tier: 'second', outcome: 'ok', embeddings: { inputs: 3, width: 8 } });
    expect((line.attempts as { tier: string; outcome: string }[]).map((a) => a.tier)).toEqual(['first', 'second']);
  });

  it('to a gemini tier: one batchEmbedContents carrying the client’s requests, each naming the tier’s model, with the provider’s key', async () => {
    const { fake, proxy, ai } = await behindDeadTier('gemini');
    const res = await ai.models.embedContent({
      model: 'embed',
      contents: TEXTS,
      config: { taskType: 'RETRIEVAL_DOCUMENT', title: 'Notes', outputDimensionality: 8 },
    });
    expect(res.embeddings?.map((embedding) => embedding.values)).toEqual(TEXTS.map((text) => vectorFor(text, 8)));
    const [sent] = posts(fake);
    expect(sent.url).toBe(`/v1beta/models/${MODEL}:batchEmbedContents`);
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    expect(sent.body).toEqual({
      requests: TEXTS.map((text) => ({
        content: { parts: [{ text }], role: 'user' },
        taskType: 'RETRIEVAL_DOCUMENT',
        title: 'Notes',
        outputDimensionality: 8,
        model: `models/${MODEL}`,
      })),
    });
    expect(proxy.logs.filter((l) => l.event === 'request').at(-1)).toMatchObject({ tier: 'second', outcome: 'ok', embeddings: { inputs: 3, width: 8 } });
  });

  it("under /v1 too (apiVersion: 'v1'), and a Gemini client's key for the route is never the tier's", async () => {
    const { fake, proxy } = await behindDeadTier('gemini');
    const ai = new GoogleGenAI({ apiKey: 'client-key-never-sent', apiVersion: 'v1', httpOptions: { baseUrl: proxy.origin } });
    const res = await ai.models.embedContent({ model: 'embed', contents: 'one text' });
    expect(res.embeddings?.[0].values).toEqual(vectorFor('one text', 8));
    expect(posts(fake)[0].headers['x-goog-api-key']).toBe(KEY);
    expect(JSON.stringify(proxy.logs)).not.toContain('client-key-never-sent');
  });
});

function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe("Gemini's two endpoints, raw", () => {
  it('batchEmbedContents to a gemini tier is relayed: the answer is the tier’s bytes; each request as written but its model', async () => {
    const { fake, proxy } = await behindDeadTier('gemini');
    const request = { model: 'models/embed', content: { parts: [{ text: 'a' }] }, taskType: 'RETRIEVAL_QUERY', outputDimensionality: 4 };
    const res = await post(proxy.origin, '/v1beta/models/embed:batchEmbedContents?key=any', {
      requests: [request, { ...request, content: { parts: [{ text: 'b' }] } }],
    });
    expect(res.status).toBe(200);
    const tierBytes = `${JSON.stringify({ embeddings: [{ values: vectorFor('a', 4) }, { values: vectorFor('b', 4) }] }, null, 2)}\n`;
    expect(await res.text()).toBe(tierBytes);
    expect(posts(fake)[0].body.requests).toEqual([
      { ...request, model: `models/${MODEL}` },
      { ...request, content: { parts: [{ text: 'b' }] }, model: `models/${MODEL}` },
    ]);
  });

  it('embedContent answers one `embedding` (from the tier’s batch of one), its parts’ texts read as one input', async () => {
    const { fake, proxy } = await behindDeadTier('ollama');
    const res = await post(proxy.origin, '/v1beta/models/embed:embedContent', { content: { parts: [{ text: 'two' }, { text: 'parts' }] } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ embedding: { values: vectorFor('two\nparts', 8) } });
    expect(posts(fake)[0].body.input).toEqual(['two\nparts']);
  });

  it.each([
    [':embedContent', {}, 'content is required'],
    [':embedContent', { content: { parts: [{ inlineData: { mimeType: 'image/png', data: 'iVBO' } }] } }, 'content.parts[0] is not text'],
    [':embedContent', { model: 'models/other', content: { parts: [{ text: 'x' }] } }, 'model "models/other" is not the model in the path (models/embed)'],
    [':batchEmbedContents', { requests: [] }, 'requests must not be empty'],
    [
      ':batchEmbedContents',
      { requests: [{ content: { parts: [{ text: 'x' }] }, outputDimensionality: 4 }, { content: { parts: [{ text: 'y' }] } }] },
      "requests[1].outputDimensionality differs from requests[0]'s",
    ],
  ])('%s %j is a 400 in Google’s shape before any tier', async (method, body, words) => {
    const { fake, proxy } = await behindDeadTier('gemini');
    const res = await post(proxy.origin, `/v1beta/models/embed${method}`, body);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: number; status: string; message: string } };
    expect(error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(error.message).toContain(words);
    expect(posts(fake)).toHaveLength(0);
  });
});

describe('a route answers its own kind, and the models list says which', () => {
  it('generateContent or countTokens to an embeddings route, embedContent to a chat route: 400s naming the route’s kind', async () => {
    const { proxy } = await behindDeadTier('gemini');
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    for (const method of [':generateContent', ':countTokens']) {
      const chat = await post(proxy.origin, `/v1beta/models/embed${method}`, { contents });
      expect(chat.status).toBe(400);
      expect(await chat.json()).toMatchObject({
        error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('/v1beta/models/embed:embedContent') },
      });
    }
    const embed = await post(proxy.origin, '/v1beta/models/chat:embedContent', { content: { parts: [{ text: 'x' }] } });
    expect(embed.status).toBe(400);
    expect(await embed.json()).toMatchObject({
      error: {
        status: 'INVALID_ARGUMENT',
        message: 'route "chat" is a chat route: embeddings need a route of kind: embeddings: name one of the embeddings routes (embed)',
      },
    });
  });

  it('/v1beta/models: an embeddings route’s methods are embedContent and batchEmbedContents (not generateContent)', async () => {
    const { proxy, ai } = await behindDeadTier('gemini');
    const list = (await (await fetch(`${proxy.origin}/v1beta/models`)).json()) as { models: { name: string; supportedGenerationMethods: string[] }[] };
    expect(list.models.map((m) => [m.name, m.supportedGenerationMethods])).toEqual([
      ['models/chat', ['generateContent', 'countTokens']],
      ['models/embed', ['embedContent', 'batchEmbedContents']],
    ]);
    expect((await ai.models.get({ model: 'embed' })).supportedActions).toEqual(['embedContent', 'batchEmbedContents']);
  });
});
