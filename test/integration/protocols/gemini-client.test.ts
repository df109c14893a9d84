import { ApiError, type GenerateContentResponse, GoogleGenAI, type Part, Type } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { chunk, completion, healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { DEAD_URL, type TierSpec } from '../../helpers/proxy.js';

/**
 * Gemini's API in front of an OpenAI-compatible tier behind a dead one, with the real
 * @google/genai client (2.32.0) on the other side: streams, whole answers, structured output,
 * thinking, token counts, the routes as models, and errors in Google's shape.
 */
const h = useHarness();

async function withTier(opts: { apiVersion?: string } = {}) {
  const fake = await h.fake();
  const tiers: TierSpec[] = [
    { name: 'dead', url: DEAD_URL, extra: { max_tokens: 2048 } },
    { name: 'cloud', url: fake.url, extra: { max_tokens: 4096 } },
  ];
  const proxy = await h.proxy({ tiers, aliases: ['gemini-*'] });
  const ai = new GoogleGenAI({ apiKey: 'k', apiVersion: opts.apiVersion, httpOptions: { baseUrl: proxy.origin } });
  return { fake, proxy, ai };
}

describe('@google/genai against an OpenAI-compatible tier, its first tier down', () => {
  it('streams chunk by chunk: text parts, the last chunk STOP with usageMetadata; the controls reach the tier in its terms', async () => {
    const { fake, proxy, ai } = await withTier();
    fake.always(healthyStream(['Hel', 'lo']));
    const stream = await ai.models.generateContentStream({
      model: 'chat',
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      // topK has no place in Chat Completions: it reaches tiers that take one (Anthropic's, Ollama's).
      config: { systemInstruction: 'Be brief.', temperature: 0.2, topP: 0.9, topK: 40, maxOutputTokens: 64, stopSequences: ['END'], seed: 7 },
    });
    const chunks: GenerateContentResponse[] = [];
    for await (const piece of stream) chunks.push(piece);
    expect(chunks.map((piece) => piece.text ?? '').join('')).toBe('Hello');
    const last = chunks.at(-1);
    expect(last?.candidates?.[0].finishReason).toBe('STOP');
    expect(last?.usageMetadata).toEqual({ promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 });
    expect(chunks.every((piece) => piece.modelVersion === 'cloud-model' && piece.responseId === chunks[0].responseId)).toBe(true);
    expect(fake.requests[0].body).toEqual({
      model: 'cloud-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 64,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      seed: 7,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(await requestLog(proxy)).toMatchObject({
      protocol: 'gemini',
      route: 'chat',
      tier: 'cloud',
      outcome: 'ok',
      usage: { prompt_tokens: 7, completion_tokens: 2 },
    });
  });

  it('a whole answer (generateContent): one GenerateContentResponse; a response schema in Gemini types reaches the tier as JSON Schema', async () => {
    const { fake, ai } = await withTier();
    fake.always((ctx) => ctx.json(200, completion('{"city":"Oslo"}', { prompt_tokens: 11, completion_tokens: 4 })));
    const answer = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'Where?',
      config: {
        responseMimeType: 'application/json',
        responseSchema: { type: Type.OBJECT, properties: { city: { type: Type.STRING, nullable: true } }, required: ['city'] },
      },
    });
    expect(answer.text).toBe('{"city":"Oslo"}');
    expect(answer.candidates?.[0].finishReason).toBe('STOP');
    expect(answer.usageMetadata).toEqual({ promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 });
    expect(fake.requests[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object', properties: { city: { type: ['string', 'null'] } }, required: ['city'] } },
    });
  });

  it('thinking: a thinking budget reaches the tier as a reasoning effort, and the reasoning comes back as thought parts when includeThoughts asks', async () => {
    const { fake, ai } = await withTier();
    fake.always((ctx) => {
      ctx.startStream();
      ctx.event(chunk({ role: 'assistant', reasoning_content: 'Let me think.' }));
      ctx.content('42');
      ctx.finish();
      ctx.done();
    });
    const stream = await ai.models.generateContentStream({
      model: 'chat',
      contents: 'answer?',
      config: { thinkingConfig: { thinkingBudget: 20000, includeThoughts: true } },
    });
    const parts: Part[] = [];
    for await (const piece of stream) parts.push(...(piece.candidates?.[0].content?.parts ?? []));
    expect(parts.filter((part) => part.thought)).toEqual([{ text: 'Let me think.', thought: true }]);
    expect(parts.filter((part) => !part.thought && part.text).map((part) => part.text)).toEqual(['42']);
    expect(fake.requests[0].body.reasoning_effort).toBe('high');

    // Without includeThoughts the thoughts are not shown, as Gemini's are not.
    const plain = await ai.models.generateContentStream({ model: 'chat', contents: 'answer?' });
    const texts: Part[] = [];
    for await (const piece of plain) texts.push(...(piece.candidates?.[0].content?.parts ?? []));
    expect(texts.some((part) => part.thought)).toBe(false);
  });

  it('countTokens: no tier counts Gemini tokens, so llm-route counts with a real tokenizer and says so', async () => {
    const { fake, ai } = await withTier();
    const counted = await ai.models.countTokens({ model: 'chat', contents: 'The quick brown fox jumps over the lazy dog.' });
    expect(counted.totalTokens).toBe(10);
    expect(counted.sdkHttpResponse?.headers?.['x-llm-route-estimated']).toBe('true');
    expect(fake.requests).toHaveLength(0);
  });

  it.each(['v1beta', 'v1'])('lists the routes as models and gets one (%s); an unknown one is NOT_FOUND', async (apiVersion) => {
    const { ai } = await withTier({ apiVersion });
    const listed = [];
    for await (const model of await ai.models.list()) listed.push(model);
    // A glob alias names no one model: only the route is listed.
    expect(listed.map((model) => model.name)).toEqual(['models/chat']);
    const model = await ai.models.get({ model: 'chat' });
    expect(model).toMatchObject({ name: 'models/chat', displayName: 'chat', outputTokenLimit: 4096, supportedActions: ['generateContent', 'countTokens'] });
    const missing = await ai.models.get({ model: 'nope' }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).status).toBe(404);
    expect(JSON.parse((missing as ApiError).message).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
  });

  it("GET /v1/models is Gemini's list for a Gemini client (x-goog-api-key, ?key=, x-goog-api-client) and OpenAI's for the rest", async () => {
    const { proxy } = await withTier();
    const gemini = (await (await fetch(`${proxy.origin}/v1/models`, { headers: { 'x-goog-api-key': 'k' } })).json()) as { models: Array<{ name: string }> };
    expect(gemini.models[0].name).toBe('models/chat');
    const byQuery = (await (await fetch(`${proxy.origin}/v1/models?key=k`)).json()) as { models: Array<{ name: string }> };
    expect(byQuery.models[0].name).toBe('models/chat');
    const openai = await (await fetch(`${proxy.origin}/v1/models`, { headers: { authorization: 'Bearer k' } })).json();
    expect(openai).toMatchObject({ object: 'list', data: [{ id: 'chat', object: 'model' }] });
    // OpenAI's own retrieve-model path is no Gemini client's: llm-route does not serve it, in OpenAI's shape.
    const retrieve = await fetch(`${proxy.origin}/v1/models/chat`);
    expect(retrieve.status).toBe(404);
    expect(((await retrieve.json()) as { error: { type?: string } }).error.type).toBeDefined();
  });

  it("errors in Google's shape: an unknown route, every tier failed, a payload the tier refused (its words, INVALID_ARGUMENT)", async () => {
    const { fake, ai } = await withTier();
    const unknown = (await ai.models.generateContent({ model: 'nope', contents: 'hi' }).catch((err: unknown) => err)) as ApiError;
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.message).error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
    expect(JSON.parse(unknown.message).error.message).toMatch(/unknown route "nope"/);

    fake.next((ctx) => ctx.error(500, 'boom'));
    const failed = (await ai.models.generateContent({ model: 'chat', contents: 'hi' }).catch((err: unknown) => err)) as ApiError;
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.message).error).toMatchObject({ code: 502, status: 'UNAVAILABLE' });

    fake.next((ctx) => ctx.error(400, "Invalid value for 'temperature': must be at most 2", { type: 'invalid_request_error' }));
    const refused = (await ai.models.generateContent({ model: 'chat', contents: 'hi', config: { temperature: 3 } }).catch((err: unknown) => err)) as ApiError;
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.message)).toEqual({
      error: { code: 400, message: "HTTP 400: Invalid value for 'temperature': must be at most 2", status: 'INVALID_ARGUMENT' },
    });
  });

  it('a stream broken after its first chunk ends with an error chunk (UNAVAILABLE), which the SDK raises after the text it had', async () => {
    const { fake, ai } = await withTier();
    fake.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      ctx.content('partial');
      await ctx.wait(20);
      ctx.destroy();
    });
    const stream = await ai.models.generateContentStream({ model: 'chat', contents: 'hi' });
    const texts: string[] = [];
    const error = (await (async () => {
      for await (const piece of stream) texts.push(piece.text ?? '');
    })().catch((err: unknown) => err)) as ApiError;
    expect(texts.join('')).toBe('partial');
    expect(error).toBeInstanceOf(ApiError);
    expect(error?.status).toBe(503);
  });
});
