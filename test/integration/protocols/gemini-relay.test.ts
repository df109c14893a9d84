import { GoogleGenAI } from '@google/genai';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream, Script, ScriptContext } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { DEAD_URL, type TierSpec } from '../../helpers/proxy.js';
import { HERMES } from '../../helpers/tool-text-forms.js';

/**
 * A Gemini client on a `gemini` tier behind a dead first tier: relayed, the bytes as Google wrote
 * them (only the model in the path changes), the JSON-array form made of the relayed events'
 * data, countTokens asked of the tier, the client's own key to a from_client provider only.
 * The upstream is a small fake of Google's API written here: chunks as Google writes them (a
 * space after each colon, CRLF CRLF after each event).
 */
const h = useHarness();

/** One chunk as Google's servers write it. */
function googleChunk(parts: unknown[], finishReason?: string): string {
  const candidate = finishReason
    ? `"content": {"parts": ${JSON.stringify(parts)},"role": "model"},"finishReason": "${finishReason}","index": 0`
    : `"content": {"parts": ${JSON.stringify(parts)},"role": "model"},"index": 0`;
  return `data: {"candidates": [{${candidate}}],"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 2,"totalTokenCount": 10},"modelVersion": "gemini-2.5-flash","responseId": "Zr1baKjJ"}\r\n\r\n`;
}

/** A fake Gemini API: the model's own GETs answered from one model, every POST by the next script. */
async function fakeGemini(...scripts: Script[]): Promise<FakeUpstream> {
  const fake = await h.fake();
  const queue = [...scripts];
  fake.always(async (ctx: ScriptContext) => {
    if (ctx.req.method === 'GET') return ctx.json(200, { name: 'models/gemini-2.5-flash', inputTokenLimit: 1048576, outputTokenLimit: 65536 });
    const script = queue.shift();
    if (!script) return ctx.json(500, { error: { code: 500, message: 'no script', status: 'INTERNAL' } });
    await script(ctx);
  });
  return fake;
}

function stream(events: string[], end: 'end' | 'break' = 'end'): Script {
  return async (ctx) => {
    ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) {
      ctx.raw(event);
      await ctx.wait(5);
    }
    if (end === 'break') {
      await ctx.wait(20);
      ctx.destroy();
    } else ctx.res.end();
  };
}

async function proxyOn(fake: FakeUpstream, provider: Record<string, unknown> = { api_key: 'AIza-provider' }) {
  const tier: TierSpec = { name: 'gem', url: `http://127.0.0.1:${fake.port}`, model: 'gemini-2.5-flash', provider: { type: 'gemini', ...provider } };
  // A default route is for bodies that name none: a Gemini body names its route in the path and gets no `model` added.
  return h.proxy({ tiers: [{ name: 'dead', url: DEAD_URL }, tier], top: { default_route: 'chat' } });
}

const post = (origin: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const TURN = {
  contents: [
    { role: 'user', parts: [{ text: 'go' }] },
    { role: 'model', parts: [{ functionCall: { name: 'ls', args: {} }, thoughtSignature: 'c2lnbmVk' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'ls', response: { output: 'a.txt' } } }] },
  ],
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
};

describe('a Gemini client on a gemini tier (relayed)', () => {
  it("SSE: the tier's events reach the client byte for byte; only the model in the path changed, the body (signatures, safetySettings) as sent, the provider's key", async () => {
    const events = [googleChunk([{ text: 'Hel' }]), googleChunk([{ text: 'lo', thoughtSignature: 'c2lnMg==' }], 'STOP')];
    const fake = await fakeGemini(stream(events));
    const proxy = await proxyOn(fake);
    const res = await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent?alt=sse', TURN, { 'x-goog-api-key': 'AIza-client' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(events.join(''));
    const call = fake.requests.find((request) => request.url.includes(':'));
    expect(call?.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(call?.body).toEqual(TURN);
    expect(call?.headers['x-goog-api-key']).toBe('AIza-provider');
    expect(await requestLog(proxy)).toMatchObject({ protocol: 'gemini', tier: 'gem', outcome: 'ok', usage: { prompt_tokens: 8, completion_tokens: 2 } });
  });

  it("without alt=sse: one JSON array whose elements are the tier's events' data as it came", async () => {
    const events = [googleChunk([{ text: 'Hel' }]), googleChunk([{ text: 'lo' }], 'STOP')];
    const fake = await fakeGemini(stream(events));
    const proxy = await proxyOn(fake);
    const res = await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent', TURN);
    const text = await res.text();
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const data = events.map((event) => event.slice('data: '.length, -4));
    expect(text).toBe(`[${data.join('\r\n,\r\n')}\r\n]`);
    expect(JSON.parse(text)).toHaveLength(2);
  });

  it('a break after the first chunk: the SSE stream ends with the error chunk, the array with the error as its last element', async () => {
    const fake = await fakeGemini(stream([googleChunk([{ text: 'Hel' }])], 'break'), stream([googleChunk([{ text: 'Hel' }])], 'break'));
    const proxy = await proxyOn(fake);
    const sse = await (await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent?alt=sse', TURN)).text();
    expect(sse.startsWith(googleChunk([{ text: 'Hel' }]))).toBe(true);
    expect(sse).toMatch(/data: \{"error":\{"code":503,"message":"llm-route: [^"]+","status":"UNAVAILABLE"\}\}\r\n\r\n$/);
    const array = JSON.parse(await (await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent', TURN)).text()) as Array<Record<string, unknown>>;
    expect(array).toHaveLength(2);
    expect(array[1]).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
  });

  it('a tool call a model wrote as text after relayed text: the rest is rendered, carrying on the relayed response id and open array', async () => {
    const events = [
      googleChunk([{ text: 'Let me look.\n' }]),
      ...HERMES.match(/.{1,16}/gs)!.map((piece) => googleChunk([{ text: piece }])),
      googleChunk([{ text: '' }], 'STOP'),
    ];
    const fake = await fakeGemini(stream(events));
    const proxy = await proxyOn(fake);
    const body = {
      ...TURN,
      tools: [{ functionDeclarations: [{ name: 'Bash', parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' } } } }] }],
    };
    const array = JSON.parse(await (await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent', body)).text()) as Array<{
      candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }>;
      responseId: string;
    }>;
    const parts = array.flatMap((element) => element.candidates[0].content.parts);
    expect(parts.filter((part) => part.functionCall)).toEqual([{ functionCall: { name: 'Bash', args: { command: 'ls -la' } } }]);
    expect(JSON.stringify(parts)).not.toContain('<tool_call>');
    expect(new Set(array.map((element) => element.responseId))).toEqual(new Set(['Zr1baKjJ']));
  });

  it("countTokens goes to the gemini tier (its count, not llm-route's estimate); @google/genai's calls reach it too", async () => {
    const fake = await fakeGemini(
      (ctx) => ctx.json(200, { totalTokens: 31, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 31 }] }),
      (ctx) => {
        ctx.res.writeHead(200, { 'content-type': 'application/json' }).end(googleChunk([{ text: 'whole' }], 'STOP').slice(6, -4));
      },
    );
    const proxy = await proxyOn(fake);
    const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: proxy.origin } });
    const counted = await ai.models.countTokens({ model: 'chat', contents: 'count me' });
    expect(counted.totalTokens).toBe(31);
    expect(counted.sdkHttpResponse?.headers?.['x-llm-route-estimated']).toBeUndefined();
    expect(fake.requests.find((request) => request.url.includes(':countTokens'))?.url).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    const whole = await ai.models.generateContent({ model: 'chat', contents: 'hi' });
    expect(whole.text).toBe('whole');
  });

  it("api_key: from_client: the client's x-goog-api-key (or ?key=) reaches the gemini provider only, never the tier before it", async () => {
    const local = await h.fake();
    local.always((ctx) => ctx.error(503, 'overloaded'));
    const fake = await fakeGemini(stream([googleChunk([{ text: 'ok' }], 'STOP')]), stream([googleChunk([{ text: 'ok' }], 'STOP')]));
    const tier: TierSpec = {
      name: 'gem',
      url: `http://127.0.0.1:${fake.port}`,
      model: 'gemini-2.5-flash',
      provider: { type: 'gemini', api_key: 'from_client' },
    };
    const proxy = await h.proxy({ tiers: [{ name: 'local', url: local.url }, tier] });
    expect((await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent?alt=sse', TURN, { 'x-goog-api-key': 'AIza-own-1' })).status).toBe(200);
    expect((await post(proxy.origin, '/v1beta/models/chat:streamGenerateContent?alt=sse&key=AIza-own-2', TURN)).status).toBe(200);
    const keys = fake.requests.filter((request) => request.url.includes(':')).map((request) => request.headers['x-goog-api-key']);
    expect(keys).toEqual(['AIza-own-1', 'AIza-own-2']);
    expect(JSON.stringify(local.requests.map((request) => request.headers))).not.toContain('AIza-own');
    expect(JSON.stringify(proxy.logs)).not.toContain('AIza-own');
  });
});
