import { describe, expect, it, vi } from 'vitest';
import type { Provider } from '../../../../src/config/schema.js';
import type { ClientCodec } from '../../../../src/protocols/core/client-codec.js';
import { EmbeddingJob } from '../../../../src/protocols/embeddings/embedding-job.js';
import { clientCodec } from '../../../../src/protocols/registry.js';
import { tier } from '../../../helpers/config.js';
import { vectorFor } from '../../../helpers/embedding-upstream.js';
import { registryEmbeddingWire } from './wires.js';

/** Gemini's embeddings, read and written (docs/embeddings.md): its two endpoints, and a gemini tier's batchEmbedContents. */

const google: Provider = { ...tier('x').provider, name: 'google', type: 'gemini', base_url: 'https://generativelanguage.googleapis.com', api_key: 'AIza-k' };
const geminiTier = tier('gemini', { provider: google, model: 'gemini-embedding-001', embedding: { space: 's', max_batch: undefined } });
const wire = registryEmbeddingWire('gemini');

/** The Gemini codec of `method` (`embedContent` or `batchEmbedContents`), as the registry serves it. */
function codecOf(method: string): ClientCodec {
  const endpoint = clientCodec('gemini').endpoints.find((e) => e.path === `/v1beta/models/{model}:${method}`);
  if (endpoint?.serves !== 'model' || !endpoint.codec) throw new Error(`no ${method}`);
  return endpoint.codec;
}

function parse(method: string, body: Record<string, unknown>) {
  return codecOf(method).parse(body, {}, undefined, { model: 'embed', query: new URLSearchParams() });
}

function jobFor(method: string, body: Record<string, unknown>, on = geminiTier) {
  const parsed = parse(method, body);
  if (!parsed.ok) throw new Error(parsed.message);
  const job = EmbeddingJob.plan(on, codecOf(method).embeddings!, parsed.request, parsed.request.embedding!.inputs);
  if ('unsupported' in job) throw new Error(job.unsupported);
  return job;
}

/** Google's answer: pretty-printed, one number a line. */
function googleAnswer(texts: string[], width = 4): Buffer {
  return Buffer.from(`${JSON.stringify({ embeddings: texts.map((text) => ({ values: vectorFor(text, width) })) }, null, 2)}\n`);
}

const text = (t: string) => ({ content: { parts: [{ text: t }], role: 'user' } });

describe("Gemini's embeddings endpoints", () => {
  it('read the route from the path, one input per request (its text parts joined), outputDimensionality as dimensions', () => {
    const batch = parse('batchEmbedContents', {
      requests: [
        { ...text('a'), model: 'models/embed', outputDimensionality: 4 },
        { ...text('b'), outputDimensionality: 4 },
      ],
    });
    expect(batch.ok && [batch.request.model, batch.request.embedding]).toEqual([
      'embed',
      { inputs: ['a', 'b'], encoding: 'float', truncate: true, dimensions: 4 },
    ]);
    const one = parse('embedContent', { content: { parts: [{ text: 'x' }, { text: 'y' }] }, taskType: 'RETRIEVAL_QUERY' });
    expect(one.ok && one.request.embedding?.inputs).toEqual(['x\ny']);
  });

  it.each([
    ['batchEmbedContents', {}, 'requests is required'],
    ['batchEmbedContents', { requests: ['a'] }, 'requests[0] must be an EmbedContentRequest object'],
    ['batchEmbedContents', { requests: [{ content: { parts: [] } }] }, 'requests[0].content.parts must be a non-empty list of parts'],
    ['batchEmbedContents', { requests: [{ ...text('a'), model: 'models/other' }] }, 'requests[0].model "models/other" is not the model in the path'],
    ['embedContent', { content: { parts: [{ text: '' }] } }, 'content holds no text to embed'],
    ['embedContent', { ...text('a'), taskType: 3 }, 'taskType must be a string'],
    ['embedContent', { ...text('a'), outputDimensionality: 0 }, 'outputDimensionality must be an integer ≥ 1'],
  ])('%s %j: a 400 saying what is wrong', (method, body, words) => {
    const parsed = parse(method, body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(words);
  });
});

describe("a gemini tier's batchEmbedContents", () => {
  it("a Gemini client's requests as written, each naming the tier's model; a split part takes its own requests", () => {
    const requests = ['a', 'b', 'c'].map((t) => ({ ...text(t), taskType: 'RETRIEVAL_DOCUMENT', title: `T ${t}`, model: 'models/embed' }));
    const job = jobFor('batchEmbedContents', { requests }, { ...geminiTier, embedding: { space: 's', max_batch: 2 } });
    expect(job.requests.map((r) => r.path)).toEqual(Array(2).fill('/v1beta/models/gemini-embedding-001:batchEmbedContents'));
    expect(job.requests[0].headers['x-goog-api-key']).toBe('AIza-k');
    expect(job.requests.map((r) => JSON.parse(r.body).requests)).toEqual([
      requests.slice(0, 2).map((r) => ({ ...r, model: 'models/gemini-embedding-001' })),
      [{ ...requests[2], model: 'models/gemini-embedding-001' }],
    ]);
  });

  it('takes at most 100 requests unless its max_batch says (Gemini refuses more in one batch)', () => {
    const requests = Array.from({ length: 101 }, (_, i) => text(`t${i}`));
    expect(jobFor('batchEmbedContents', { requests }).requests.map((r) => JSON.parse(r.body).requests.length)).toEqual([100, 1]);
  });

  it("an input cut to the tier's window goes as that text, the request's other fields kept", () => {
    const parsed = parse('embedContent', { ...text('a long text'), title: 'T' });
    if (!parsed.ok) throw new Error(parsed.message);
    const job = EmbeddingJob.plan(geminiTier, codecOf('embedContent').embeddings!, parsed.request, ['a long']);
    if ('unsupported' in job) throw new Error(job.unsupported);
    expect(JSON.parse(job.requests[0].body).requests).toEqual([
      { content: { parts: [{ text: 'a long' }], role: 'user' }, title: 'T', model: 'models/gemini-embedding-001' },
    ]);
  });

  it('token ids are no text for Gemini', () => {
    const part = { inputs: [[1, 2]], offset: 0, encoding: 'float', truncate: true } as const;
    expect(wire.request(google, geminiTier, part, {})).toEqual({ unsupported: "Gemini's embeddings take texts, not token ids" });
  });

  it("its answer scanned and read without parsing a number: Google's indentation is no width", () => {
    const body = googleAnswer(['a', 'b'], 5);
    expect(wire.scan(body)).toEqual({ count: 2, width: 5, encoding: 'float', promptTokens: undefined });
    const parse = vi.spyOn(JSON, 'parse');
    const decoded = wire.decode(body);
    expect(parse).not.toHaveBeenCalled();
    parse.mockRestore();
    expect(decoded !== 'not_json' && decoded.vectors.map((v) => JSON.parse(String('json' in v ? v.json : '')))).toEqual([vectorFor('a', 5), vectorFor('b', 5)]);
    expect(wire.scan(Buffer.from('{"embeddings": []}'))).toMatchObject({ count: 0 });
    expect(wire.scan(Buffer.from('{"error": {"code": 500}}'))).toBe('not_json');
  });

  it('a batch in one request is relayed as its bytes; embedContent is written from them as one `embedding`', () => {
    const decode = vi.spyOn(wire, 'decode');
    const batch = jobFor('batchEmbedContents', { requests: [text('a'), text('b')] });
    const body = googleAnswer(['a', 'b']);
    const relayed = batch.finish([body], 'application/json', performance.now());
    expect('body' in relayed && relayed.body).toBe(body);
    expect(decode).not.toHaveBeenCalled();
    decode.mockRestore();
    const one = jobFor('embedContent', text('a'));
    expect(one.relays).toBe(false);
    const written = one.finish([googleAnswer(['a'])], 'application/json', performance.now());
    expect('body' in written && JSON.parse(written.body.toString())).toEqual({ embedding: { values: vectorFor('a', 4) } });
  });
});
