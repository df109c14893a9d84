import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness } from '../../helpers/harness.js';
import type { RunningProxy } from '../../helpers/proxy.js';

/**
 * Gemini CLI 0.61.0's own requests, byte for byte as it sent them (test/fixtures/gemini-cli/,
 * captured in a loopback-only namespace), through a dead first tier to an OpenAI-compatible one:
 * what the tier gets, the classes rules see, and the answers Gemini CLI reads.
 */
const h = useHarness();

const FIXTURES = join(repoRoot, 'test/fixtures/gemini-cli');
interface Captured {
  name: string;
  path: string;
  headers: Record<string, string>;
}
const captured: Captured[] = JSON.parse(readFileSync(join(FIXTURES, 'requests.json'), 'utf8')).requests;

function fixture(name: string): { path: string; headers: Record<string, string>; body: string } {
  const meta = captured.find((entry) => entry.name === name) as Captured;
  return { path: meta.path, headers: meta.headers, body: readFileSync(join(FIXTURES, `${name}.body.json`), 'utf8') };
}

async function proxyFor(extra = ''): Promise<{ p: RunningProxy; local: Awaited<ReturnType<typeof h.fake>>; small: Awaited<ReturnType<typeof h.fake>> }> {
  const local = await h.fake();
  local.always((ctx) =>
    ctx.body.stream === true ? healthyStream(['Listing ', 'done.'])(ctx) : ctx.json(200, completion('{"complexity_reasoning":"x","complexity_score":9}')),
  );
  const small = await h.fake();
  small.always((ctx) => ctx.json(200, completion('{"complexity_reasoning":"x","complexity_score":9}')));
  const p = await h.proxy(`version: 1
server: { port: 0 }
providers:
  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }
  p_local: { type: openai, base_url: "${local.url}" }
  p_small: { type: openai, base_url: "${small.url}" }
routes:
  local:
    tiers: [{ provider: dead, model: m }, { provider: p_local, model: qwen }]
  small:
    tiers: [{ provider: p_small, model: tiny }]
${extra}`);
  return { p, local, small };
}

function send(p: RunningProxy, name: string, path?: string): Promise<Response> {
  const request = fixture(name);
  return fetch(`${p.origin}${path ?? request.path}`, { method: 'POST', headers: request.headers, body: request.body });
}

describe("Gemini CLI 0.61.0's requests, as it sent them", () => {
  it('its first turn: system instruction, its eight functions, the prompt; the answer streams as SSE chunks Gemini CLI reads', async () => {
    const { p, local } = await proxyFor();
    const res = await send(p, 'turn-1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    expect(text).toMatch(
      /^data: \{"candidates":\[\{"content":\{"parts":\[\{"text":"Listing "\}\],"role":"model"\},"index":0\}\],"modelVersion":"qwen","responseId":"[\w-]+"\}\r\n\r\n/,
    );
    expect(text).toMatch(
      /"finishReason":"STOP","index":0\}\],"usageMetadata":\{"promptTokenCount":7,"candidatesTokenCount":2,"totalTokenCount":9\}[^\n]*\r\n\r\n$/,
    );
    const sent = local.requests[0].body as { messages: Array<{ role: string; content: unknown }>; tools: Array<{ function: { name: string } }> };
    expect(sent.messages[0]).toMatchObject({ role: 'system' });
    expect(String(sent.messages[0].content)).toMatch(/^You are Gemini CLI, an autonomous CLI agent/);
    expect(JSON.stringify(sent.messages.at(-1))).toContain('list the files here');
    expect(sent.tools.map((tool) => tool.function.name)).toEqual([
      'update_topic',
      'list_directory',
      'read_file',
      'grep_search',
      'glob',
      'google_web_search',
      'enter_plan_mode',
      'invoke_agent',
    ]);
    expect(await requestLog(p)).toMatchObject({ protocol: 'gemini', route: 'local', tier: 'p_local', outcome: 'ok' });
  });

  it("its second turn: its function call (with the id it made and Google's thoughtSignature) and the response, paired; no signature reaches the tier", async () => {
    const { p, local } = await proxyFor();
    expect((await send(p, 'turn-2')).status).toBe(200);
    const messages = local.requests[0].body.messages as Array<Record<string, unknown>>;
    const call = messages.find((message) => message.role === 'assistant') as {
      tool_calls: Array<{ id: string; function: { name: string; arguments: string } }>;
    };
    const result = messages.find((message) => message.role === 'tool') as { tool_call_id: string; content: string };
    expect(call.tool_calls).toEqual([
      { id: expect.stringMatching(/^list_directory_\d+_0$/), type: 'function', function: { name: 'list_directory', arguments: '{"dir_path":"."}' } },
    ]);
    expect(result.tool_call_id).toBe(call.tool_calls[0].id);
    expect(result.content).toMatch(/^Directory listing for /);
    expect(JSON.stringify(local.requests[0].body)).not.toContain('thoughtSignature');
    expect(JSON.stringify(local.requests[0].body)).not.toContain('c2lnbmF0dXJl');
  });

  it("rules: its model-routing classifier is background (a small route takes it), its turns main; the classifier's schema in capitals reaches the tier as JSON Schema", async () => {
    const { p, small } = await proxyFor(`rules:
  - name: gemini-helpers
    when: { client: gemini-cli, class: background, protocol: gemini }
    route: small
`);
    const classifier = await send(p, 'classifier');
    expect(classifier.status).toBe(200);
    expect(classifier.headers.get('x-llm-route-route')).toBe('small');
    expect(JSON.parse(await classifier.text()).candidates[0].content.parts[0].text).toContain('complexity_score');
    expect(small.requests[0].body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'response',
        schema: {
          type: 'object',
          properties: {
            complexity_reasoning: { type: 'string', description: 'Brief explanation for the score.' },
            complexity_score: { type: 'integer', description: 'Complexity score from 1-100.' },
          },
          required: ['complexity_reasoning', 'complexity_score'],
        },
      },
    });
    expect(await requestLog(p)).toMatchObject({ route: 'small', rule: 'gemini-helpers' });
    const turn = await send(p, 'turn-1');
    expect(turn.headers.get('x-llm-route-route')).toBe('local');
  });

  it('without alt=sse, the stream is one JSON array written as it grows', async () => {
    const { p, local } = await proxyFor();
    local.always(healthyStream(['a', 'b', 'c'], { delayMs: 30 }));
    const res = await send(p, 'turn-1', '/v1beta/models/local:streamGenerateContent');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    // The first element goes out before the answer is whole.
    expect(first).toMatch(/^\[\{"candidates":\[\{"content":\{"parts":\[\{"text":"a"\}\]/);
    expect(first).not.toContain(']\r\n');
    let rest = '';
    for (let read = await reader.read(); !read.done; read = await reader.read()) rest += new TextDecoder().decode(read.value);
    const array = JSON.parse(first + rest) as Array<{ candidates: Array<{ content: { parts: Array<{ text: string }> }; finishReason?: string }> }>;
    expect(array.map((element) => element.candidates[0].content.parts[0].text).join('')).toBe('abc');
    expect(array.at(-1)?.candidates[0].finishReason).toBe('STOP');
    expect(first + rest).toMatch(/\}\r\n,\r\n\{/);
  });

  it("llm-route's token as a Gemini client sends a key (x-goog-api-key or ?key=); a wrong one is UNAUTHENTICATED in Google's shape, and the key is never logged", async () => {
    const local = await h.fake();
    local.always(healthyStream(['ok']));
    const guarded = await h.proxy({ tiers: [{ name: 'local', url: local.url }], route: 'local', server: { auth_token: 'tok-gem' } });
    const body = fixture('turn-1').body;
    const post = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${guarded.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post('/v1beta/models/local:streamGenerateContent?alt=sse', { 'x-goog-api-key': 'tok-gem' })).status).toBe(200);
    expect((await post('/v1beta/models/local:streamGenerateContent?alt=sse&key=tok-gem')).status).toBe(200);
    const wrong = await post('/v1beta/models/local:streamGenerateContent?alt=sse&key=not-the-token');
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    expect(JSON.stringify(guarded.logs)).not.toContain('tok-gem');
    expect(JSON.stringify(guarded.logs)).not.toContain('not-the-token');
  });

  it("paths llm-route does not serve under Gemini's API get Google's 404; a generation path asked with GET its 405", async () => {
    const { p } = await proxyFor();
    for (const path of ['/v1beta/models/local:asyncBatchEmbedContent', '/v1beta/cachedContents', '/v1/models/local:batchGenerateContent', '/v1beta/files']) {
      const res = await fetch(`${p.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
    }
    const get = await fetch(`${p.origin}/v1beta/models/local:generateContent`);
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: 405, status: 'INVALID_ARGUMENT' } });
  });
});
