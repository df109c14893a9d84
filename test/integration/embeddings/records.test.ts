import { join } from 'node:path';
import OpenAI from 'openai';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { completion, type Script } from '../../helpers/fake-upstream.js';
import { llamaEmbeddings, vectorFor } from '../../helpers/embedding-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { CLIENT, OtlpReceiver, SERVER } from '../../helpers/otlp-receiver.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

// docs/embeddings.md, "Everything else, as for every request": usage rows, cost, budgets,
// Idempotency-Key, traces.

const h = useHarness();
const tempDir = useTempDirs();

const PRICE = { input_per_mtok: 0.02, output_per_mtok: 1 };

function post(origin: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** An OpenAI-style server: embeddings (`embed` script) and chat completions, priced; the usage log at `db`. */
async function pricedProxy(embed: Script, top: Record<string, unknown>, env: Record<string, string> = {}) {
  const fake = await h.fake();
  fake.always((ctx) => (ctx.req.url?.endsWith('/embeddings') ? embed(ctx) : ctx.json(200, completion('hi', { prompt_tokens: 5, completion_tokens: 2 }))));
  const yaml = stringify({
    version: 1,
    server: { port: 0 },
    providers: { cloud: { type: 'openai', base_url: fake.url, price: PRICE } },
    routes: {
      chat: { tiers: [{ provider: 'cloud', model: 'gpt-4o-mini' }] },
      embed: { kind: 'embeddings', tiers: [{ provider: 'cloud', model: 'text-embedding-3-small' }] },
    },
    ...top,
  });
  return { fake, proxy: await h.proxy(yaml, { traceEnv: env }) };
}

/** Reports `tokens` prompt tokens whatever it embeds. */
function reporting(tokens: number): Script {
  return (ctx) => {
    const inputs = ctx.body.input as string[];
    ctx.json(200, {
      object: 'list',
      data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, 4) })),
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };
}

describe('usage rows', () => {
  it('kind embeddings, the input tokens the server reported, priced at input_per_mtok; no answer tokens; chat rows say chat', async () => {
    const db = join(tempDir(), 'usage.db');
    const { proxy } = await pricedProxy(reporting(1_000_000), { usage: { path: db } });
    expect((await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: ['a', 'b'] })).status).toBe(200);
    expect((await post(proxy.origin, '/v1/chat/completions', { model: 'chat', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    await proxy.server.usage.flush();
    const [embed, chat] = readRequests(db);
    expect(embed).toMatchObject({ kind: 'embeddings', route: 'embed', stream: 0, prompt_tokens: 1_000_000, completion_tokens: 0, token_source: 'upstream' });
    expect(embed.cost_usd).toBeCloseTo(0.02, 9);
    expect(chat).toMatchObject({ kind: 'chat', route: 'chat', prompt_tokens: 5, completion_tokens: 2 });
  });

  it('a server that reports no usage: the inputs are counted with the tokenizer, marked estimated', async () => {
    const db = join(tempDir(), 'usage.db');
    const { proxy } = await pricedProxy(llamaEmbeddings({ width: 4, noUsage: true }), { usage: { path: db } });
    const res = await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: ['hello world', 'one two three'] });
    // Relayed: the answer is the server's, without usage.
    expect(await res.json()).not.toHaveProperty('usage');
    await proxy.server.usage.flush();
    await waitFor(() => readRequests(db)[0]?.token_source === 'estimated:o200k_base', 5000, 'the estimate');
    expect(readRequests(db)[0]).toMatchObject({ kind: 'embeddings', prompt_tokens: 6, completion_tokens: 0 });
  });
});

describe('budgets and Idempotency-Key', () => {
  it('a tokens budget counts the input tokens (no answer tokens reserved); spent, the next batch is a 429', async () => {
    const db = join(tempDir(), 'usage.db');
    // The first batch reserves its inputs' estimate (no answer tokens: 100 would not be left for 4,096 of them) and spends it all.
    const { fake, proxy } = await pricedProxy(reporting(100), { usage: { path: db }, budgets: [{ scope: 'route:embed', per: 'day', tokens: 100 }] });
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'x', maxRetries: 0 });
    await client.embeddings.create({ model: 'embed', input: ['a short text'], encoding_format: 'float' });
    await expect(client.embeddings.create({ model: 'embed', input: ['a short text'], encoding_format: 'float' })).rejects.toMatchObject({
      status: 429,
      error: { code: 'budget_exhausted' },
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('a duplicate with the same key gets the same vectors, replayed; the tier is asked once', async () => {
    const { fake, proxy } = await pricedProxy(llamaEmbeddings({ width: 4 }), {});
    const body = { model: 'embed', input: ['x', 'y'], encoding_format: 'base64' };
    const first = await post(proxy.origin, '/v1/embeddings', body, { 'idempotency-key': 'batch-1' });
    const second = await post(proxy.origin, '/v1/embeddings', body, { 'idempotency-key': 'batch-1' });
    expect(second.headers.get('x-llm-route-replayed')).toBe('true');
    expect(await second.text()).toBe(await first.text());
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0].headers['idempotency-key']).toBe('batch-1');
  });
});

describe('traces', () => {
  it('an embeddings request’s attempt span: embeddings {model}, gen_ai.operation.name embeddings, the width and input tokens', async () => {
    const receiver = await OtlpReceiver.start();
    h.defer(() => receiver.close());
    const { proxy } = await pricedProxy(reporting(7), {}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' });
    expect((await post(proxy.origin, '/v1/embeddings', { model: 'embed', input: ['a', 'b', 'c'] })).status).toBe(200);
    const attempt = await waitFor(() => receiver.spans.find((s) => s.kind === CLIENT), 5000, 'the attempt span');
    expect(attempt.name).toBe('embeddings text-embedding-3-small');
    expect(attempt.attributes).toMatchObject({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.request.model': 'text-embedding-3-small',
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.embeddings.dimension.count': 4,
    });
    expect(receiver.spans.find((s) => s.kind === SERVER)?.name).toBe('POST /v1/embeddings');
  });
});
