import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../../helpers/harness.js';
import { type RealLlama, realLlamaBuilt, startRealLlama, startRealLlamaEmbeddings } from '../../helpers/real-llama.js';

/**
 * Embeddings through llm-route to llama.cpp's own llama-server (random weights, real server:
 * scripts/real-llama/): one started without --embeddings (its real 501) as the first tier, one
 * with it as the second, in the same space. The vectors are the model's hidden width of random
 * numbers: enough to check shapes, order, splits and failover. Skipped without the build.
 */
const available = realLlamaBuilt();
const TEXTS = ['def add(a, b):', 'return a + b', 'class Point:', '# the end', 'import os'];
const h = useHarness();
let chatOnly: RealLlama | undefined;
let embedder: RealLlama | undefined;
/** The server's own vectors for TEXTS, asked directly in one request. */
let expected: number[][] = [];

// A CPU-only server on a busy machine takes seconds per batch: bounds are generous, nothing is timed.
const SLOW = 180_000;

beforeAll(async () => {
  if (!available) return;
  [chatOnly, embedder] = await Promise.all([startRealLlama(), startRealLlamaEmbeddings()]);
  const res = await fetch(`${embedder.url}/embeddings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: TEXTS }),
  });
  expected = ((await res.json()) as { data: { embedding: number[] }[] }).data.map((d) => d.embedding);
}, 300_000);

afterAll(async () => {
  await Promise.all([chatOnly?.stop(), embedder?.stop()]);
}, 30_000);

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) [dot, na, nb] = [dot + a[i] * b[i], na + a[i] * a[i], nb + b[i] * b[i]];
  return dot / Math.sqrt(na * nb);
}

async function proxy(maxBatch?: number) {
  return h.proxy(
    stringify({
      version: 1,
      server: { port: 0 },
      providers: { plain: { type: 'openai', base_url: chatOnly?.url }, box: { type: 'openai', base_url: embedder?.url } },
      routes: {
        embed: {
          kind: 'embeddings',
          tiers: [
            { name: 'plain', provider: 'plain', model: 'tiny', space: 'random-smollm2' },
            {
              name: 'box',
              provider: 'box',
              model: 'tiny',
              space: 'random-smollm2',
              ...(maxBatch ? { max_batch: maxBatch } : {}),
              timeouts: { total_ms: 120_000 },
            },
          ],
        },
      },
    }),
  );
}

describe.skipIf(!available)('embeddings against real llama-servers', () => {
  it(
    'the openai SDK and ollama-js get one vector of the model’s width per input, in order, through the tier started without --embeddings',
    async () => {
      const p = await proxy();
      const width = expected[0].length;
      expect(width).toBeGreaterThan(100);
      const openai = await new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 }).embeddings.create({ model: 'embed', input: TEXTS });
      expect(openai.data.map((d) => d.embedding.length)).toEqual(TEXTS.map(() => width));
      openai.data.forEach((d, i) => expect(cosine(d.embedding, expected[i])).toBeGreaterThan(0.999));
      // Each vector is its own input's, not its neighbour's.
      expect(cosine(openai.data[0].embedding, expected[1])).toBeLessThan(0.99);
      expect(openai.usage.prompt_tokens).toBeGreaterThan(0);
      const ollama = await new Ollama({ host: p.origin }).embed({ model: 'embed', input: TEXTS });
      ollama.embeddings.forEach((vector, i) => expect(cosine(vector, expected[i])).toBeGreaterThan(0.999));
      const lines = p.logs.filter((l) => l.event === 'request');
      for (const line of lines) {
        expect((line.attempts as { tier: string; outcome: string; status?: number }[]).map((a) => [a.tier, a.outcome, a.status])).toEqual([
          ['plain', 'unsupported', 501],
          ['box', 'ok', 200],
        ]);
        expect(line.embeddings).toEqual({ inputs: TEXTS.length, width, cut: 0 });
      }
    },
    SLOW,
  );

  it(
    'a batch over max_batch goes in parts and comes back joined, in order',
    async () => {
      const p = await proxy(2);
      const answer = (await (
        await fetch(`${p.baseURL}/embeddings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'embed', input: TEXTS }),
        })
      ).json()) as { data: { index: number; embedding: number[] }[]; usage: { prompt_tokens: number } };
      expect(answer.data.map((d) => d.index)).toEqual([0, 1, 2, 3, 4]);
      answer.data.forEach((d, i) => expect(cosine(d.embedding, expected[i])).toBeGreaterThan(0.999));
      expect(answer.usage.prompt_tokens).toBeGreaterThan(TEXTS.length);
    },
    SLOW,
  );
});
