import { join } from 'node:path';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { geminiBatchEmbed, geminiRequestText, llamaEmbeddings, vectorFor } from '../../helpers/embedding-upstream.js';
import { FakeGemini, geminiEmbeddingModel, overloaded } from '../../helpers/gemini-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

// docs/embeddings.md: a gemini tier in an embeddings route: batches of at most 100 requests (its
// max_batch), split and joined in order; no usage reported (estimated); a tier of another width
// never answers; a client's own key for api_key: from_client.

const h = useHarness();
const tempDir = useTempDirs();
const KEY = 'AIza-embed-key-0123456789';
const MODEL = 'gemini-embedding-001';

/** Route `embed`: a gemini tier (space `docs`), then `more` tiers; `top` more of the tier file. */
async function geminiRoute(more: Record<string, unknown>[] = [], providers: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  const gemini = new FakeGemini(await h.fake(), [geminiEmbeddingModel(MODEL)]);
  gemini.keys = [KEY];
  const tier = { name: 'gemini', provider: 'google', model: MODEL, space: 'docs', retry: { attempts: 1 } };
  const proxy = await h.proxy(
    stringify({
      version: 1,
      server: { port: 0 },
      providers: { google: { type: 'gemini', base_url: gemini.url, api_key: KEY }, ...providers },
      routes: { embed: { kind: 'embeddings', space: 'docs', tiers: [tier, ...more] } },
      ...top,
    }),
  );
  return { gemini, proxy, ai: new GoogleGenAI({ apiKey: 'unused', httpOptions: { baseUrl: proxy.origin } }) };
}

/** The sizes of the batches a gemini tier was sent, in order. */
function batches(gemini: FakeGemini): number[] {
  return gemini.calls.map((call) => (call.body.requests as unknown[]).length);
}

describe('a batch larger than a gemini tier takes', () => {
  it('250 inputs from @google/genai: three batchEmbedContents of at most 100, joined in input order; tokens estimated', async () => {
    const db = join(tempDir(), 'usage.db');
    const { gemini, proxy, ai } = await geminiRoute([], {}, { usage: { path: db } });
    gemini.always(geminiBatchEmbed({ width: 8 }));
    const texts = Array.from({ length: 250 }, (_, i) => `chunk ${i}`);
    const res = await ai.models.embedContent({ model: 'embed', contents: texts });
    expect(res.embeddings?.map((embedding) => embedding.values)).toEqual(texts.map((text) => vectorFor(text, 8)));
    expect(batches(gemini)).toEqual([100, 100, 50]);
    expect(gemini.calls.flatMap((call) => (call.body.requests as unknown[]).map(geminiRequestText))).toEqual(texts);
    expect(proxy.logs.find((l) => l.event === 'request')).toMatchObject({ tier: 'gemini', outcome: 'ok', embeddings: { inputs: 250, width: 8 } });
    await proxy.server.usage.flush();
    expect(readRequests(db)[0]).toMatchObject({ kind: 'embeddings', protocol: 'gemini', completion_tokens: 0, token_source: 'estimated:o200k_base' });
    expect(readRequests(db)[0].prompt_tokens).toBeGreaterThan(250);
  });

  it('an OpenAI client’s 150 inputs (and its dimensions): two requests, its answer in OpenAI’s shape with the estimate as usage', async () => {
    const { gemini, proxy } = await geminiRoute();
    gemini.always(geminiBatchEmbed());
    const texts = Array.from({ length: 150 }, (_, i) => `line ${i}`);
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    const res = await client.embeddings.create({ model: 'embed', input: texts, dimensions: 4, encoding_format: 'float' });
    expect(res.data.map((d) => d.index)).toEqual(texts.map((_, i) => i));
    expect(res.data.map((d) => d.embedding)).toEqual(texts.map((text) => vectorFor(text, 4)));
    expect(res.usage.prompt_tokens).toBeGreaterThan(150);
    expect(batches(gemini)).toEqual([100, 50]);
    expect(gemini.calls[0].body.requests).toContainEqual({ model: `models/${MODEL}`, content: { parts: [{ text: 'line 0' }] }, outputDimensionality: 4 });
  });
});

describe('the space’s width', () => {
  it('fixed by the gemini tier’s answer: a tier of another width is asked, and never answers', async () => {
    const other = await h.fake();
    other.always(llamaEmbeddings({ width: 16, salt: 7 }));
    const { gemini, proxy, ai } = await geminiRoute([{ name: 'wide', provider: 'box', model: 'other-embedder', space: 'docs' }], {
      box: { type: 'openai', base_url: other.url },
    });
    gemini.next(geminiBatchEmbed({ width: 8 }));
    gemini.always(overloaded);
    expect((await ai.models.embedContent({ model: 'embed', contents: 'first' })).embeddings?.[0].values).toEqual(vectorFor('first', 8));
    const refused = await fetch(`${proxy.origin}/v1beta/models/embed:embedContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'second' }] } }),
    });
    expect(refused.status).toBe(503);
    const { error } = (await refused.json()) as { error: { status: string; message: string } };
    expect(error.status).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/^no tier of vector space "docs" \(route "embed"\) could answer/);
    expect(other.requests.filter((r) => r.url.endsWith('/embeddings'))).toHaveLength(1);
    const line = proxy.logs.filter((l) => l.event === 'request').at(-1) ?? {};
    expect((line.attempts as { tier: string; outcome: string }[]).map((a) => [a.tier, a.outcome])).toEqual([
      ['gemini', 'server_error'],
      ['wide', 'dimension_mismatch'],
    ]);
    await expect(ai.models.embedContent({ model: 'embed', contents: 'third' })).rejects.toMatchObject({ status: 503 });
  });
});

describe('api_key: from_client', () => {
  it("a Gemini client's own key (x-goog-api-key or ?key=) reaches the gemini provider as x-goog-api-key", async () => {
    const gemini = new FakeGemini(await h.fake(), [geminiEmbeddingModel(MODEL)]);
    gemini.keys = [KEY];
    gemini.always(geminiBatchEmbed());
    const proxy = await h.proxy(
      stringify({
        version: 1,
        server: { port: 0 },
        providers: { google: { type: 'gemini', base_url: gemini.url, api_key: 'from_client' } },
        routes: { embed: { kind: 'embeddings', tiers: [{ provider: 'google', model: MODEL }] } },
      }),
    );
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: proxy.origin } });
    expect((await ai.models.embedContent({ model: 'embed', contents: 'mine' })).embeddings).toHaveLength(1);
    const byQuery = await fetch(`${proxy.origin}/v1beta/models/embed:batchEmbedContents?key=${KEY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [{ content: { parts: [{ text: 'mine' }] } }] }),
    });
    expect(byQuery.status).toBe(200);
    expect(gemini.calls.map((call) => [call.headers['x-goog-api-key'], call.url.includes('key=')])).toEqual([
      [KEY, false],
      [KEY, false],
    ]);
    expect(JSON.stringify(proxy.logs)).not.toContain(KEY);
  });
});
