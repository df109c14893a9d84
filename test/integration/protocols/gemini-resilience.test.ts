import { type GenerateContentResponse, GoogleGenAI, type Part } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { CLIENT, OtlpReceiver, SERVER } from '../../helpers/otlp-receiver.js';
import { DEAD_URL } from '../../helpers/proxy.js';
import { breakAfter, FULL, lastMessage, resumeRoute, taggedStream, WORDS } from '../../helpers/resume-scripts.js';
import { HERMES } from '../../helpers/tool-text-forms.js';
import { sseContent } from '../../helpers/tool-text-kit.js';

/**
 * What every protocol gets, for a Gemini client (@google/genai): mid-stream recovery, hedged
 * first tokens, tool calls a local model wrote as text, budgets, traces.
 */
const h = useHarness();

function client(origin: string): GoogleGenAI {
  return new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: origin } });
}

async function streamed(origin: string, config: Record<string, unknown> = {}): Promise<{ chunks: GenerateContentResponse[]; failed: string | null }> {
  const chunks: GenerateContentResponse[] = [];
  try {
    for await (const piece of await client(origin).models.generateContentStream({ model: 'chat', contents: 'write a sentence', config })) chunks.push(piece);
  } catch (error) {
    return { chunks, failed: (error as Error).message };
  }
  return { chunks, failed: null };
}

/** The text parts of the chunks (the SDK's `text` getter warns on a chunk with a call in it). */
const textOf = (chunks: GenerateContentResponse[]) =>
  chunks
    .flatMap((piece) => piece.candidates?.[0].content?.parts ?? [])
    .map((part) => (part.thought ? '' : (part.text ?? '')))
    .join('');

describe('mid-stream recovery, Gemini client', () => {
  it('a break after the first words: the next tier goes on from the delivered text, in the same stream under one response id', async () => {
    const { b, proxy } = await resumeRoute(h, breakAfter(4), taggedStream(WORDS.slice(4), 'second'));
    const { chunks, failed } = await streamed(proxy.origin);
    expect(failed).toBeNull();
    expect(textOf(chunks)).toBe(FULL);
    expect(new Set(chunks.map((piece) => piece.responseId)).size).toBe(1);
    expect(chunks.at(-1)?.candidates?.[0].finishReason).toBe('STOP');
    expect(lastMessage(b.requests[0].body)).toEqual({ role: 'assistant', content: 'The quick brown fox ' });
    expect((await requestLog(proxy)).resumed).toMatchObject({ from: 'a', to: 'b', how: 'continue', result: 'ok' });
  });

  it('with on_break: error, the stream ends with an error chunk the SDK raises', async () => {
    const { b, proxy } = await resumeRoute(h, breakAfter(3), taggedStream(WORDS, 'second'), { onBreak: 'error' });
    const { chunks, failed } = await streamed(proxy.origin);
    expect(textOf(chunks)).toBe('The quick brown ');
    expect(failed).toMatch(/"status":"UNAVAILABLE"/);
    expect(b.requests).toHaveLength(0);
  });
});

describe('hedged first tokens, Gemini client', () => {
  it('a stalled first tier: the next starts after hedge_ms and answers', async () => {
    const a = await h.fake();
    const b = await h.fake();
    a.always(async (ctx) => {
      ctx.startStream();
      await ctx.closed;
    });
    b.always(healthyStream(WORDS, { delayMs: 10 }));
    const proxy = await h.proxy({
      tiers: [
        { name: 'a', url: a.url, timeouts: { ttft_ms: 20_000 } },
        { name: 'b', url: b.url },
      ],
      routeKeys: { hedge_ms: 100 },
    });
    const { chunks, failed } = await streamed(proxy.origin);
    expect(failed).toBeNull();
    expect(textOf(chunks)).toBe(FULL);
    expect(await requestLog(proxy)).toMatchObject({ protocol: 'gemini', tier: 'b', hedged: { winner: 'b', loser: 'a' } });
    expect(metric((await fetchMetrics(proxy)).samples, 'llm_requests_total', { route: 'chat', tier: 'b', outcome: 'ok', protocol: 'gemini' })).toBe(1);
  });
});

describe('a tool call a local model wrote as text, Gemini client', () => {
  it('a Hermes <tool_call> in the text reaches the app as a functionCall part, never as text', async () => {
    const local = await h.fake();
    local.always(sseContent(['Let me look.\n', ...HERMES.match(/.{1,12}/gs)!]));
    const proxy = await h.proxy({
      tiers: [
        { name: 'dead', url: DEAD_URL },
        { name: 'local', url: local.url },
      ],
    });
    const tools = [
      {
        functionDeclarations: [{ name: 'Bash', parametersJsonSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } }],
      },
    ];
    const { chunks, failed } = await streamed(proxy.origin, { tools });
    expect(failed).toBeNull();
    const parts: Part[] = chunks.flatMap((piece) => piece.candidates?.[0].content?.parts ?? []);
    expect(parts.flatMap((part) => (part.functionCall ? [part.functionCall] : []))).toEqual([{ name: 'Bash', args: { command: 'ls -la' } }]);
    expect(textOf(chunks)).not.toContain('<tool_call>');
    expect(chunks.at(-1)?.candidates?.[0].finishReason).toBe('STOP');
    expect((await requestLog(proxy)).tool_text).toMatchObject({ result: 'recovered', format: 'hermes', calls: 1 });
  });
});

describe('budgets and traces, Gemini client', () => {
  it("a spent budget is RESOURCE_EXHAUSTED (429) in Google's shape", async () => {
    const fake = await h.fake();
    fake.always(healthyStream(['ok']));
    const proxy = await h.proxy({ tiers: [{ name: 'cloud', url: fake.url }], top: { budgets: [{ scope: 'route:chat', per: 'day', tokens: 1 }] } });
    await streamed(proxy.origin);
    const res = await fetch(`${proxy.origin}/v1beta/models/chat:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'again' }] }] }),
    });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
  });

  it('a request span (its path without the query, protocol gemini) and an attempt span per tier', async () => {
    const receiver = await OtlpReceiver.start();
    h.defer(() => receiver.close());
    const fake = await h.fake();
    fake.always(healthyStream(['ok']));
    const proxy = await h.proxy(
      {
        tiers: [
          { name: 'dead', url: DEAD_URL },
          { name: 'cloud', url: fake.url },
        ],
      },
      { traceEnv: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20' } },
    );
    const res = await fetch(`${proxy.origin}/v1beta/models/chat:streamGenerateContent?alt=sse&key=AIza-never-in-a-span`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const server = await waitFor(() => receiver.spans.find((span) => span.kind === SERVER), 5000, 'the request span');
    expect(server.attributes).toMatchObject({
      'url.path': '/v1beta/models/chat:streamGenerateContent',
      'llm_route.protocol': 'gemini',
      'llm_route.tier': 'cloud',
    });
    await waitFor(() => receiver.spans.filter((span) => span.kind === CLIENT).length === 2, 5000, 'two attempt spans');
    expect(JSON.stringify(receiver.spans, (_key, value) => (typeof value === 'bigint' ? String(value) : value))).not.toContain('AIza-never-in-a-span');
  });
});
