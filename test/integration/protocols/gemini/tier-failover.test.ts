import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../../helpers/fake-upstream.js';
import {
  FakeGemini,
  geminiChunk,
  geminiError,
  geminiEvent,
  geminiTextStream,
  overloaded,
  quotaExhausted,
  startGeminiStream,
} from '../../../helpers/gemini-upstream.js';
import { readAll, requestLog, useHarness } from '../../../helpers/harness.js';
import { closedPort } from '../../../helpers/ports.js';
import { chat, errorEvents, sseText, type TierSpec } from '../../../helpers/proxy.js';

/**
 * Failover the client never sees, with a gemini tier on either side of it: before the first
 * chunk, a failing tier in front (503, 429 with Google's RetryInfo, a refused connection, a key
 * Google refuses) hands over to the next; after it, the client gets its own protocol's error.
 * A key is never in a log line or an error.
 */
const h = useHarness();
const KEY = 'AIza-secret-key-never-logged';

async function gemini(name = 'gemini'): Promise<{ fake: FakeGemini; tier: TierSpec }> {
  const fake = new FakeGemini(await h.fake());
  fake.keys = [KEY];
  return { fake, tier: { name, type: 'gemini', url: fake.url, model: 'gemini-2.5-flash', api_key: KEY } };
}

async function openai(name = 'local'): Promise<{ fake: Awaited<ReturnType<typeof h.fake>>; tier: TierSpec }> {
  const fake = await h.fake();
  return { fake, tier: { name, url: fake.url } };
}

describe('before the first chunk, to a gemini tier', () => {
  it.each([
    ['a 503', (ctx: Parameters<typeof overloaded>[0]) => ctx.error(503, 'Service Unavailable', { type: 'server_error' }), 'server_error'],
    [
      'a 429 whose Retry-After is past the retry budget',
      (ctx: Parameters<typeof overloaded>[0]) => ctx.error(429, 'slow down', { headers: { 'retry-after': '30' } }),
      'rate_limited',
    ],
  ])('%s from the local tier: the gemini tier answers', async (_what, script, outcome) => {
    const local = await openai();
    local.fake.always(script);
    const cloud = await gemini();
    cloud.fake.next(geminiTextStream(['from', ' gemini']));
    const proxy = await h.proxy({ tiers: [{ ...local.tier, retry: { attempts: 1 } }, cloud.tier] });
    const res = await chat(proxy, { stream: true });
    expect(sseText((await readAll(res)).text)).toBe('from gemini');
    expect(res.headers.get('x-llm-route-tier')).toBe('gemini');
    expect((await requestLog(proxy)).attempts).toMatchObject([
      { tier: 'local', outcome },
      { tier: 'gemini', outcome: 'ok' },
    ]);
  });

  it('a refused connection: the gemini tier answers', async () => {
    const cloud = await gemini();
    cloud.fake.next(geminiTextStream(['up']));
    const proxy = await h.proxy({ tiers: [{ name: 'down', url: `http://127.0.0.1:${await closedPort()}/v1` }, cloud.tier] });
    const res = await chat(proxy, { stream: true });
    expect(sseText((await readAll(res)).text)).toBe('up');
    expect((await requestLog(proxy)).attempts).toMatchObject([{ tier: 'down', outcome: 'connection_refused' }, { outcome: 'ok' }]);
  });

  it("Google's 429 with RetryInfo: a short delay is waited and the same tier tried again; a long one moves on at once", async () => {
    const first = await gemini('first');
    first.fake.next((ctx) => quotaExhausted(ctx, '0.05s'), geminiTextStream(['after', ' waiting']));
    // No jitter: the wait is RetryInfo's alone.
    const proxy = await h.proxy({ tiers: [first.tier] }, { random: () => 0 });
    const started = performance.now();
    const res = await chat(proxy, { stream: true });
    expect(sseText((await readAll(res)).text)).toBe('after waiting');
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(first.fake.calls).toHaveLength(2);

    const slow = await gemini('slow');
    slow.fake.always((ctx) => quotaExhausted(ctx, '26s'));
    const next = await openai('next');
    next.fake.always(healthyStream(['next', ' tier']));
    const moved = await h.proxy({ tiers: [{ ...slow.tier, retry: { attempts: 3, base_ms: 1 } }, next.tier] });
    const answer = await chat(moved, { stream: true });
    expect(sseText((await readAll(answer)).text)).toBe('next tier');
    expect(slow.fake.calls).toHaveLength(1);
    expect((await requestLog(moved)).attempts).toMatchObject([
      { tier: 'slow', outcome: 'rate_limited', status: 429 },
      { tier: 'next', outcome: 'ok' },
    ]);
  });
});

describe('from a gemini tier, before its first chunk', () => {
  it('a key Google refuses (400 API_KEY_INVALID) fails over as auth, and the key is in no log line', async () => {
    const cloud = await gemini();
    const next = await openai('next');
    next.fake.always((ctx) => ctx.json(200, completion('from next')));
    const proxy = await h.proxy({ tiers: [{ ...cloud.tier, api_key: 'AIza-wrong-key-also-secret' }, next.tier] });
    const res = await chat(proxy, {});
    expect(((await res.json()) as OpenAI.ChatCompletion).choices[0].message.content).toBe('from next');
    const log = await requestLog(proxy);
    expect(log.attempts).toMatchObject([
      { tier: 'gemini', outcome: 'auth', status: 400 },
      { tier: 'next', outcome: 'ok' },
    ]);
    expect(JSON.stringify(proxy.logs)).not.toMatch(/AIza-wrong-key-also-secret|AIza-secret-key/);
  });

  it("Google's 503 and a prompt over the model's limit (400) both hand over; an echoed key is cut from the client's error", async () => {
    const cloud = await gemini();
    cloud.fake.next(overloaded, (ctx) =>
      geminiError(ctx, 400, 'INVALID_ARGUMENT', 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).'),
    );
    const next = await openai('next');
    next.fake.always(healthyStream(['handed', ' over']));
    const proxy = await h.proxy({ tiers: [{ ...cloud.tier, retry: { attempts: 1 } }, next.tier] });
    expect(sseText((await readAll(await chat(proxy, { stream: true }))).text)).toBe('handed over');
    expect(sseText((await readAll(await chat(proxy, { stream: true }))).text)).toBe('handed over');
    const outcomes = proxy.logs.filter((l) => l.event === 'request').map((l) => (l.attempts as Array<{ outcome: string }>)[0].outcome);
    expect(outcomes).toEqual(['server_error', 'context_length']);

    const echo = await gemini('echo');
    echo.fake.always((ctx) => geminiError(ctx, 400, 'INVALID_ARGUMENT', `Invalid value for key ${KEY}: contents is not specified`));
    const alone = await h.proxy({ tiers: [echo.tier] });
    const refused = await chat(alone, {});
    const body = await refused.text();
    expect(refused.status).toBe(400);
    expect(body).toContain('contents is not specified');
    expect(body + JSON.stringify(alone.logs)).not.toContain(KEY);
  });
});

describe("a gemini tier that takes the client's own key (api_key: from_client)", () => {
  it("is skipped for a credential of another API: a Chat client's OpenAI key never reaches Gemini", async () => {
    const mine = await gemini('mine');
    const next = await openai('next');
    next.fake.always((ctx) => ctx.json(200, completion('from next')));
    const proxy = await h.proxy({ tiers: [{ ...mine.tier, api_key: 'from_client' }, next.tier] });
    const client = new OpenAI({ baseURL: proxy.baseURL, apiKey: 'sk-openai-user-key', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0].message.content).toBe('from next');
    expect(mine.fake.calls).toHaveLength(0);
    for (const seen of mine.fake.fake.requests) expect(JSON.stringify(seen.headers)).not.toContain('sk-openai-user-key');
    const line = await requestLog(proxy);
    expect((line.attempts as Array<Record<string, unknown>>).map((a) => [a.tier, a.outcome])).toEqual([
      ['mine', 'no_client_credential'],
      ['next', 'ok'],
    ]);
    expect(JSON.stringify(line)).toContain("the client's credential is for OpenAI's API; this api_key: from_client provider is type gemini");
  });
});

describe('after the first chunk of a gemini tier', () => {
  it('an error chunk ends a Chat stream with its error event, and the Anthropic SDK raises', async () => {
    const cloud = await gemini();
    const broken = async (ctx: Parameters<typeof overloaded>[0]) => {
      startGeminiStream(ctx);
      geminiEvent(ctx, geminiChunk([{ text: 'Half an ans' }], { prompt: 5, candidates: 3 }));
      await ctx.wait(20);
      geminiEvent(ctx, { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
      ctx.res.end();
    };
    cloud.fake.always(broken);
    const proxy = await h.proxy({ tiers: [cloud.tier] });
    const { text } = await readAll(await chat(proxy, { stream: true }));
    expect(sseText(text)).toBe('Half an ans');
    expect(errorEvents(text)).toHaveLength(1);
    expect(text).not.toContain('[DONE]');

    const client = new Anthropic({ baseURL: proxy.origin, apiKey: 'unused', maxRetries: 0 });
    const stream = client.messages.stream({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    await expect(stream.finalMessage()).rejects.toThrow(/internal error/i);
  });

  it('a break mid-stream ends the client stream with an error, never cleanly', async () => {
    const cloud = await gemini();
    cloud.fake.always(async (ctx) => {
      startGeminiStream(ctx);
      geminiEvent(ctx, geminiChunk([{ text: 'Hel' }], { prompt: 5, candidates: 1 }));
      await ctx.wait(20);
      ctx.destroy();
    });
    const proxy = await h.proxy({ tiers: [cloud.tier] });
    const { text } = await readAll(await chat(proxy, { stream: true }));
    expect(sseText(text)).toBe('Hel');
    expect(errorEvents(text)[0].error).toMatchObject({ code: 'stream_interrupted' });
  });
});
