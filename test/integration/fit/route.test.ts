import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { logLine, useHarness } from '../../helpers/harness.js';
import { anthropicMessage } from '../../helpers/anthropic-upstream.js';

const h = useHarness();

/** About `n` tokens of o200k text ("word" is one token, so is " word"). */
const words = (n: number): string => 'word '.repeat(n);
const readAll = (body: Record<string, unknown>) => ({ prompt_tokens: JSON.stringify(body).split('word').length + 10, completion_tokens: 3 });

/** A real llama-server's 400 for a prompt over its slot (b6xxx, /v1/chat/completions). */
const LLAMA_EXCEEDS = {
  error: {
    code: 400,
    message: 'request (870 tokens) exceeds the available context size (256 tokens), try increasing it',
    type: 'exceed_context_size_error',
    n_prompt_tokens: 870,
    n_ctx: 256,
  },
};

async function twoTiers(local: Record<string, unknown>) {
  const small = await h.fake();
  const cloud = await h.fake();
  // Each reports what it read, the whole prompt (one token a word): no silent truncation here.
  small.always((ctx) => ctx.json(200, completion('from local', readAll(ctx.body))));
  cloud.always((ctx) => ctx.json(200, completion('from cloud', readAll(ctx.body))));
  const proxy = await h.proxy({
    tiers: [
      { name: 'local', url: small.url, extra: local },
      { name: 'cloud', url: cloud.url },
    ],
  });
  const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
  return { small, cloud, proxy, openai };
}

describe('route by fit: a tier whose window is known is never sent what it cannot hold', () => {
  it('skips a 4k-window tier for a prompt well over it (no request reaches it), and sends it one well under it', async () => {
    const { small, cloud, openai, proxy } = await twoTiers({ context: 4096 });
    const long = await openai.chat.completions.create({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: words(5000) }] }).withResponse();
    expect(long.data.choices[0].message.content).toBe('from cloud');
    expect(small.requests).toHaveLength(0);
    expect(long.response.headers.get('x-llm-route-tier')).toBe('cloud');
    const line = await logLine(proxy, long.response.headers.get('x-request-id'));
    expect((line.attempts as Array<{ outcome: string }>)[0]).toMatchObject({ tier: 'local', outcome: 'too_long' });
    expect(String((line.attempts as Array<{ message: string }>)[0].message)).toMatch(
      /prompt of \d+ tokens \+ 100 for the answer does not fit tier "local"'s 4096-token window \(config\)/,
    );

    // 80% of the window (prompt + reserve) is always sent: 3,100 + 100 < 0.8 × 4096.
    const near = await openai.chat.completions.create({ model: 'chat', max_tokens: 100, messages: [{ role: 'user', content: words(3100) }] });
    expect(near.choices[0].message.content).toBe('from local');
    expect(small.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
  });

  it('reserves min(max_tokens, 1024) for the answer: the same prompt fits with max_tokens 10 and not without one', async () => {
    const { small, openai } = await twoTiers({ context: 4096 });
    const prompt = words(3500);
    const small10 = await openai.chat.completions.create({ model: 'chat', max_tokens: 10, messages: [{ role: 'user', content: prompt }] });
    expect(small10.choices[0].message.content).toBe('from local');
    const unset = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: prompt }] });
    expect(unset.choices[0].message.content).toBe('from cloud');
    expect(small.requests).toHaveLength(1);
  });

  it('max_prompt_tokens skips the tier for bigger prompts, and a stream goes to the next tier unseen', async () => {
    const small = await h.fake();
    const cloud = await h.fake();
    cloud.always(healthyStream(['from', ' cloud']));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: small.url, extra: { max_prompt_tokens: 1000 } },
        { name: 'cloud', url: cloud.url },
      ],
    });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: words(1500) }] });
    let text = '';
    for await (const part of stream) text += part.choices[0]?.delta?.content ?? '';
    expect(text).toBe('from cloud');
    expect(small.requests).toHaveLength(0);
  });

  it('vision: false and tools: false skip the tier as unsupported without contacting it', async () => {
    const { small, cloud, openai, proxy } = await twoTiers({ vision: false, tools: false });
    const image = await openai.chat.completions
      .create({
        model: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is it?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      })
      .withResponse();
    expect(image.data.choices[0].message.content).toBe('from cloud');
    const tools = await openai.chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
    });
    expect(tools.choices[0].message.content).toBe('from cloud');
    const plain = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.choices[0].message.content).toBe('from local');
    expect(small.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(2);
    const line = await logLine(proxy, image.response.headers.get('x-request-id'));
    expect((line.attempts as Array<Record<string, unknown>>)[0]).toMatchObject({
      tier: 'local',
      outcome: 'unsupported',
      message: 'tier "local" takes no images (vision: false)',
    });
  });
});

describe("route by fit: when every tier failed for the prompt's size, the client gets a 400 in its protocol", () => {
  it('OpenAI SDK: 400 context_length_exceeded with the attempts, not retried (the tier got nothing)', async () => {
    const small = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: small.url, extra: { context: 2000 } }] });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 2 });
    const error = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: words(3000) }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('context_length_exceeded');
    expect(bad.type).toBe('invalid_request_error');
    expect(bad.message).toMatch(/prompt is too long: \d{4} tokens > 2000 maximum/);
    expect((bad.error as { attempts: unknown[] }).attempts).toEqual([expect.objectContaining({ tier: 'local', outcome: 'too_long' })]);
    expect(small.requests).toHaveLength(0);
  });

  it('Anthropic SDK: 400 invalid_request_error "prompt is too long: N tokens > M maximum" (what Claude Code compacts on)', async () => {
    const small = await h.fake();
    const other = await h.fake();
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: small.url, extra: { context: 2000 } },
        { name: 'mid', url: `http://127.0.0.1:${other.port}`, type: 'anthropic', extra: { context: 3000 } },
      ],
    });
    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 2 });
    const error = await anthropic.messages.create({ model: 'chat', max_tokens: 500, messages: [{ role: 'user', content: words(4000) }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const bad = error as InstanceType<typeof Anthropic.BadRequestError>;
    expect(bad.status).toBe(400);
    const body = bad.error as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/^prompt is too long: \d{4} tokens > 3000 maximum$/);
    expect(Number(/(\d+) tokens/.exec(body.error.message)?.[1])).toBeGreaterThan(3900);
    expect(small.requests).toHaveLength(0);
    expect(other.requests).toHaveLength(0);
  });

  it("a single tier whose server rejects the prompt (llama-server exceed_context_size_error): 400 with the server's own numbers", async () => {
    const llama = await h.fake();
    llama.always((ctx) => ctx.json(400, LLAMA_EXCEEDS));
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: llama.url }] });
    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
    const error = await anthropic.messages.create({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'long enough for 256 tokens' }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as { status: number }).status).toBe(400);
    expect((error as { error: { error: { message: string } } }).error.error.message).toBe('prompt is too long: 870 tokens > 256 maximum');
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const chatError = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((chatError as { code: string }).code).toBe('context_length_exceeded');
    expect(llama.requests).toHaveLength(2);
  });

  it('Responses and streams too: the 400 comes before any SSE byte, and the SDK does not retry it', async () => {
    const small = await h.fake();
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: small.url, extra: { context: 2000 } }] });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 2 });
    const responses = await openai.responses.create({ model: 'chat', input: words(3000) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((responses as { status: number; code: string }).status).toBe(400);
    expect((responses as { code: string }).code).toBe('context_length_exceeded');
    const stream = await openai.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: words(3000) }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(stream).toBeInstanceOf(OpenAI.BadRequestError);
    expect(small.requests).toHaveLength(0);
  });

  it('too_long skips are health-neutral: many of them leave the tier healthy and in the plan', async () => {
    const { small, openai, proxy } = await twoTiers({ context: 2000, circuit: { failures: 1 } });
    for (let i = 0; i < 4; i++) await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: words(3000) }] });
    const health = (await (await fetch(`${proxy.origin}/healthz`)).json()) as { routes?: unknown };
    expect(JSON.stringify(health)).not.toMatch(/"down"/);
    const short = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(short.choices[0].message.content).toBe('from local');
    expect(small.requests).toHaveLength(1);
  });

  it('mixed with a tier fault it stays a 502', async () => {
    const small = await h.fake();
    const cloud = await h.fake();
    cloud.always((ctx) => ctx.error(500, 'boom'));
    const proxy = await h.proxy({
      tiers: [
        { name: 'local', url: small.url, extra: { context: 2000 } },
        { name: 'cloud', url: cloud.url, retry: { attempts: 1 } },
      ],
    });
    const openai = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'k', maxRetries: 0 });
    const error = await openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: words(3000) }] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as { status: number }).status).toBe(502);
    expect(small.requests).toHaveLength(0);
    expect(cloud.requests).toHaveLength(1);
  });

  it('the Anthropic answer of a tier that fits is untouched by the check', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, anthropicMessage([{ type: 'text', text: 'ok' }])));
    const proxy = await h.proxy({ tiers: [{ name: 'claude', url: `http://127.0.0.1:${upstream.port}`, type: 'anthropic', extra: { context: 200000 } }] });
    const anthropic = new Anthropic({ baseURL: proxy.origin, apiKey: 'k', maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: words(3000) }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'ok' });
    expect(upstream.requests).toHaveLength(1);
  });
});
