import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { fetchMetrics, metric, readAll, requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { ollamaWhole } from '../../helpers/ollama-upstream.js';
import { chat, sseText } from '../../helpers/proxy.js';
import {
  anthropicClient,
  CHAT_TOOLS,
  type LocalRouteOptions,
  localRoute,
  MESSAGES_TOOLS,
  nativeBashCall,
  ollamaContent,
  openaiClient,
  piecesOf,
  recordingFetch,
  sseContent,
} from '../../helpers/tool-text-kit.js';
import { HERMES } from '../../helpers/tool-text-forms.js';
import { readAttempts, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

// docs/tool-text.md: a call the client cannot run fails over before the client
// has seen a byte of it (proven by the bytes it got); on the last tier it goes out as written;
// a plain answer on a route with tools is the byte relay it always was.
const h = useHarness();
const tempDir = useTempDirs();
const UNKNOWN_TOOL = HERMES.replace('Bash', 'Nope');
const MISSING_ARG = '<tool_call>\n{"name": "Read", "arguments": {"limit": 3}}\n</tool_call>';

const routeOf = (local: 'openai' | 'ollama', opts: LocalRouteOptions = {}) => localRoute(h, local, opts);

describe('tool calls written as text that cannot be run', () => {
  it('an unknown tool fails over before the client saw a byte of it; the next tier gets the same payload', async () => {
    const db = join(tempDir(), 'usage.db');
    const { local, cloud, proxy } = await routeOf('ollama', { usageDb: db });
    local.always(ollamaContent(piecesOf(UNKNOWN_TOOL)));
    cloud.always(nativeBashCall);
    const seen = recordingFetch();
    const stream = await openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'list files' }],
      tools: CHAT_TOOLS,
    });
    const names: string[] = [];
    for await (const c of stream) for (const call of c.choices[0]?.delta.tool_calls ?? []) if (call.function?.name) names.push(call.function.name);
    expect(names).toEqual(['Bash']);
    expect(seen.bodies[0]).not.toContain('Nope');
    expect(seen.bodies[0]).not.toContain('tool_call>');
    expect(seen.bodies[0]).toContain('call_cloud1');
    // Both tiers were asked the same thing (each in its own wire).
    expect(local.requests).toHaveLength(1);
    expect(cloud.requests).toHaveLength(1);
    expect((local.requests[0].body.messages as unknown[]).at(-1)).toMatchObject({ role: 'user', content: 'list files' });
    expect((cloud.requests[0].body.messages as unknown[]).at(-1)).toEqual({ role: 'user', content: 'list files' });
    expect((cloud.requests[0].body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toEqual(['Bash', 'Read']);
    const line = await requestLog(proxy);
    expect(line.attempts).toMatchObject([
      { tier: 'local', outcome: 'bad_tool_call' },
      { tier: 'cloud', outcome: 'ok' },
    ]);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 0, repaired: false, result: 'failed_over' });
    const { samples } = await fetchMetrics(proxy);
    expect(metric(samples, 'llm_tool_text_total', { route: 'chat', tier: 'local', format: 'hermes', result: 'failed_over' })).toBe(1);
    // The usage row (a real SQLite file) keeps it too.
    await proxy.server.usage.flush();
    expect(readRequests(db).map((r) => [r.tier, r.tool_text])).toEqual([
      ['cloud', JSON.stringify({ format: 'hermes', calls: 0, repaired: false, result: 'failed_over' })],
    ]);
    expect(readAttempts(db).map((a) => [a.tier, a.outcome])).toEqual([
      ['local', 'bad_tool_call'],
      ['cloud', 'ok'],
    ]);
  });

  it('arguments that break the schema fail over too (Messages client, translated local tier, non-stream as well)', async () => {
    const { local, cloud, proxy } = await routeOf('openai');
    local.next(sseContent(piecesOf(MISSING_ARG)), (ctx) => ctx.json(200, completion(MISSING_ARG)));
    cloud.next(healthyStream(['From ', 'the cloud.']), (ctx) => ctx.json(200, completion('From the cloud.')));
    const seen = recordingFetch();
    const client = anthropicClient(proxy, seen.fetch);
    const streamed = await client.messages
      .stream({ model: 'chat', max_tokens: 256, messages: [{ role: 'user', content: 'x' }], tools: MESSAGES_TOOLS })
      .finalMessage();
    expect(streamed.content).toMatchObject([{ type: 'text', text: 'From the cloud.' }]);
    const whole = await client.messages.create({ model: 'chat', max_tokens: 256, messages: [{ role: 'user', content: 'x' }], tools: MESSAGES_TOOLS });
    expect(whole.content).toMatchObject([{ type: 'text', text: 'From the cloud.' }]);
    for (const body of seen.bodies) expect(body).not.toContain('limit');
    expect(local.requests).toHaveLength(2);
    expect(cloud.requests).toHaveLength(2);
  });

  it('on the last tier the text goes out as the model wrote it, and the log says so (stream and whole)', async () => {
    const { local, proxy } = await routeOf('ollama', { cloud: false });
    local.next(ollamaContent(piecesOf(UNKNOWN_TOOL)), (ctx) => ctx.json(200, ollamaWhole({ content: UNKNOWN_TOOL })));
    const client = openaiClient(proxy, fetch);
    const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe(UNKNOWN_TOOL);
    const whole = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS });
    expect(whole.choices[0].message.content).toBe(UNKNOWN_TOOL);
    expect(whole.choices[0].finish_reason).toBe('stop');
    const lines = proxy.logs.filter((l) => l.event === 'request');
    expect(lines.map((l) => l.tool_text)).toEqual([
      { format: 'hermes', calls: 0, repaired: false, result: 'passed_as_text' },
      { format: 'hermes', calls: 0, repaired: false, result: 'passed_as_text' },
    ]);
  });

  it("the last tier is the last this request tries, not the file's last: a later tier out of the plan (weight 0) or skipped by fit leaves the text as written, not a 502", async () => {
    for (const cloud of [{ weight: 0 }, { extra: { tools: false } }, { extra: { max_prompt_tokens: 1 } }]) {
      const localFake = await h.fake();
      const cloudFake = await h.fake();
      const proxy = await h.proxy({
        tiers: [
          { name: 'local', url: `http://127.0.0.1:${localFake.port}`, type: 'ollama', model: 'qwen2.5-coder:7b' },
          { name: 'cloud', url: cloudFake.url, ...cloud },
        ],
      });
      const client = openaiClient(proxy, fetch);
      // The whole answer first: the stream's fake reports 40 prompt tokens, which a counted prompt would take for a silent cut.
      localFake.next((ctx) => ctx.json(200, ollamaWhole({ content: UNKNOWN_TOOL }, 500)));
      const whole = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS });
      expect(whole.choices[0].message.content, JSON.stringify(cloud)).toBe(UNKNOWN_TOOL);
      localFake.next(ollamaContent(piecesOf(UNKNOWN_TOOL)));
      const stream = await client.chat.completions.create({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'x' }], tools: CHAT_TOOLS });
      let text = '';
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
      expect(text, JSON.stringify(cloud)).toBe(UNKNOWN_TOOL);
      expect(cloudFake.requests).toHaveLength(0);
      const lines = await waitFor(() => {
        const requests = proxy.logs.filter((l) => l.event === 'request');
        return requests.length === 2 ? requests : null;
      });
      expect(lines.map((l) => [l.status, (l.tool_text as { result: string }).result])).toEqual([
        [200, 'passed_as_text'],
        [200, 'passed_as_text'],
      ]);
    }
  });
});

describe('what tool text leaves alone', () => {
  it('a plain answer on a route with tools is the same byte relay as without tools, even one opening with < or [', async () => {
    for (const pieces of [
      ['Hello', ' there'],
      ['<b>bold</b>', ' text'],
      ['[link]', '(x)'],
    ]) {
      const { local, proxy } = await routeOf('openai');
      local.always(sseContent(pieces));
      const body = { stream: true, stream_options: { include_usage: true } };
      const withTools = (await readAll(await chat(proxy, { ...body, tools: CHAT_TOOLS }))).text;
      const without = (await readAll(await chat(proxy, body))).text;
      expect(withTools).toBe(without);
      expect(withTools).toContain(JSON.stringify(pieces[0]).slice(1, -1));
      expect(proxy.logs.filter((l) => l.event === 'request').every((l) => l.tool_text === undefined)).toBe(true);
    }
  });

  it('tool_text: off, and tool_choice "none", relay the text as written', async () => {
    const off = await routeOf('openai', { localExtra: { tool_text: 'off' } });
    off.local.always(sseContent(piecesOf(HERMES)));
    const none = await routeOf('openai');
    none.local.always(sseContent(piecesOf(HERMES)));
    for (const [proxy, extra] of [
      [off.proxy, {}],
      [none.proxy, { tool_choice: 'none' }],
    ] as const) {
      const { text } = await readAll(await chat(proxy, { stream: true, tools: CHAT_TOOLS, ...extra }));
      expect(sseText(text)).toBe(HERMES);
      expect(text).not.toContain('"tool_calls"');
    }
  });
});
