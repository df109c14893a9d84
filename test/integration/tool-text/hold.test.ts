import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { readAll, requestLog, socketClosed, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, errorEvents, sseData } from '../../helpers/proxy.js';
import {
  anthropicClient,
  CHAT_TOOLS,
  fileContent,
  hermesWrite,
  type LocalRouteOptions,
  localRoute,
  nativeBashCall,
  ollamaContent,
  openaiClient,
  piecesOf,
  recordingFetch,
  sseContent,
  WRITE_CHAT_TOOLS,
  WRITE_MESSAGES_TOOLS,
} from '../../helpers/tool-text-kit.js';
import { DashboardState } from '../../../src/ui/dashboard-state.js';

// docs/tool-text.md: a form's first bytes within ttft_ms meet the tier's TTFT;
// the hold then lasts while bytes keep arriving, and only idle_ms of silence, stream_max_ms
// (when set) or the answer cap end it as bad_tool_call — a long Write call that a slow local
// model spends many times ttft_ms on reaches the agent as one native call.
const h = useHarness();

async function route(local: 'openai' | 'ollama', opts: LocalRouteOptions = {}) {
  const routed = await localRoute(h, local, opts);
  const { proxy } = routed;
  // The dashboard's view of the same events, as `serve` feeds it.
  const dashboard = new DashboardState();
  proxy.server.app.telemetry.subscribe((event) => dashboard.apply(event, Date.now()));
  return { ...routed, held: () => dashboard.snapshot(proxy.server.app.config, Date.now()).heldCalls };
}

describe('a call written as text is held while it grows', () => {
  it('a Write call that takes many times ttft_ms reaches a Chat client as one native call; nothing fails over, total_ms and the deadline do not cut it', async () => {
    const content = fileContent(1500);
    const form = hermesWrite('/tmp/app.py', content);
    const { local, cloud, proxy, held } = await route('openai', { timeouts: { ttft_ms: 300, total_ms: 600 }, deadline_ms: 700 });
    local.always(sseContent(piecesOf(form, 6), { paceMs: 3 }));
    const seen = recordingFetch();
    const started = performance.now();
    const stream = await openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'write app.py' }],
      tools: WRITE_CHAT_TOOLS,
    });
    const elapsed = performance.now() - started;
    const calls: Array<{ name?: string; args: string }> = [];
    let finish: string | null = null;
    for await (const c of stream) {
      for (const call of c.choices[0]?.delta.tool_calls ?? []) {
        if (call.id) calls[call.index] = { name: call.function?.name, args: '' };
        calls[call.index].args += call.function?.arguments ?? '';
      }
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    // The setup: the model took several times ttft_ms, total_ms and the deadline to write it.
    expect(elapsed).toBeGreaterThan(900);
    expect(calls).toHaveLength(1);
    expect(calls[0].name).toBe('Write');
    expect(JSON.parse(calls[0].args)).toEqual({ file_path: '/tmp/app.py', content });
    expect(finish).toBe('tool_calls');
    expect(cloud.requests).toHaveLength(0);
    expect(seen.bodies[0]).not.toContain('tool_call>');
    const line = await requestLog(proxy);
    expect(line.attempts).toMatchObject([{ tier: 'local', outcome: 'ok' }]);
    // The tier's TTFT is its form's first bytes; the client's, the commit with the whole call.
    expect((line.attempts as Array<{ ms: number }>)[0].ms).toBeLessThan(300);
    expect(line.ttft_ms as number).toBeGreaterThan(900);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 1, repaired: false, result: 'recovered' });
    expect(held()).toEqual([]);
  });

  it('the same through a rendered stream: a Messages client (Claude Code) on an Ollama tier; the dashboard shows the held call growing', async () => {
    const content = fileContent(800);
    const { local, cloud, proxy, held } = await route('ollama', { timeouts: { ttft_ms: 300 } });
    const pieces = piecesOf(hermesWrite('src/app.py', content), 5);
    local.always(ollamaContent(pieces, { paceMs: 6 }));
    const told: number[] = [];
    proxy.server.app.telemetry.subscribe((event) => event.type === 'tool_text_hold' && told.push(event.chars));
    const done = anthropicClient(proxy, fetch)
      .messages.stream({ model: 'chat', max_tokens: 4096, messages: [{ role: 'user', content: 'write it' }], tools: WRITE_MESSAGES_TOOLS })
      .finalMessage();
    const first = await waitFor(() => held()[0], 3000, 'a held call on the dashboard');
    expect(first).toMatchObject({ route: 'chat', tier: 'local' });
    // It grows while the model writes (told at most once a second, not once a chunk).
    const later = await waitFor(() => ((held()[0]?.chars ?? 0) > first.chars ? held()[0] : null), 3000, 'the held call to grow');
    expect(later.heldMs).toBeGreaterThanOrEqual(first.heldMs);
    const message = await done;
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'Write', input: { file_path: 'src/app.py', content } }]);
    expect(message.stop_reason).toBe('tool_use');
    expect(cloud.requests).toHaveLength(0);
    await waitFor(() => held().length === 0, 3000, 'the dashboard to let the call go');
    // Told when it began, about once a second while it grew, and when it ended: never once per chunk.
    expect(told.length).toBeGreaterThanOrEqual(3);
    expect(told.length).toBeLessThan(pieces.length / 20);
    expect(told.at(-1)).toBe(0);
  });
});

describe('what ends a hold', () => {
  it('idle_ms of silence: bad_tool_call, the next tier answers before the client saw a byte (the local stream is cut)', async () => {
    const { local, cloud, proxy, held } = await route('ollama', { timeouts: { ttft_ms: 300, idle_ms: 800 } });
    local.always(ollamaContent(['<tool_call>\n{"name": "Bash", "argu'], { stallAfter: true }));
    cloud.always(healthyStream(['cloud ', 'answer']));
    const seen = recordingFetch();
    const answer = openaiClient(proxy, seen.fetch).chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'x' }],
      tools: CHAT_TOOLS,
      stream: true,
    });
    // Past ttft_ms it is still held, and shown.
    await waitFor(() => held().length === 1, 3000, 'the held call');
    let text = '';
    for await (const c of await answer) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe('cloud answer');
    expect(seen.bodies[0]).not.toContain('argu');
    await socketClosed(local);
    const line = await requestLog(proxy);
    expect(line.attempts).toMatchObject([
      { tier: 'local', outcome: 'bad_tool_call', message: expect.stringContaining('no content for idle_ms (800 ms)') },
      { tier: 'cloud', outcome: 'ok' },
    ]);
    expect((line.attempts as Array<{ ms: number }>)[0].ms).toBeGreaterThanOrEqual(780);
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 0, repaired: false, result: 'failed_over' });
    expect(held()).toEqual([]);
  });

  it('on the last tier, a stalled form goes out as the model wrote it, then the stream ends with the idle error', async () => {
    const { local, proxy } = await route('ollama', { cloud: false, timeouts: { ttft_ms: 300, idle_ms: 600 } });
    local.always(ollamaContent(['<tool_call>\n{"name": "Bash", "argu'], { stallAfter: true }));
    const { text } = await readAll(await chat(proxy, { stream: true, tools: CHAT_TOOLS }));
    const content = sseData(text)
      .filter((d) => d !== '[DONE]')
      .map((d) => JSON.parse(d).choices?.[0]?.delta.content ?? '')
      .join('');
    expect(content).toBe('<tool_call>\n{"name": "Bash", "argu');
    expect(errorEvents(text)).toMatchObject([{ error: { message: expect.stringContaining('no content within 600 ms') } }]);
    const line = await requestLog(proxy);
    expect(line.outcome).toBe('interrupted');
    expect(line.tool_text).toEqual({ format: 'hermes', calls: 0, repaired: false, result: 'passed_as_text' });
  });

  it('a form that outgrows stream_max_ms: bad_tool_call, the next tier answers', async () => {
    const { local, cloud, proxy } = await route('openai', { timeouts: { ttft_ms: 300, stream_max_ms: 900 } });
    local.always(sseContent(piecesOf(hermesWrite('a.txt', fileContent(4000)), 4), { paceMs: 5 }));
    cloud.always(nativeBashCall);
    const { text } = await readAll(await chat(proxy, { stream: true, tools: WRITE_CHAT_TOOLS }));
    expect(text).toContain('call_cloud1');
    expect(text).not.toContain('step_');
    const line = await requestLog(proxy);
    expect(line.attempts).toMatchObject([
      { tier: 'local', outcome: 'bad_tool_call', message: expect.stringContaining('still open at stream_max_ms (900 ms)') },
      { tier: 'cloud', outcome: 'ok' },
    ]);
  });

  it('a route with hedge_ms: a form held past hedge_ms is its tier answering, no hedge starts', async () => {
    const { local, cloud, proxy } = await route('openai', { timeouts: { ttft_ms: 2000 }, routeKeys: { hedge_ms: 150 } });
    local.always(sseContent(piecesOf(hermesWrite('a.txt', fileContent(300)), 5), { paceMs: 6 }));
    cloud.always(healthyStream(['cloud']));
    const { text } = await readAll(await chat(proxy, { stream: true, tools: WRITE_CHAT_TOOLS }));
    expect(text).toContain('"name":"Write"');
    expect(cloud.requests).toHaveLength(0);
    const line = await requestLog(proxy);
    expect(line.hedged).toBeUndefined();
    expect(line.attempts).toMatchObject([{ tier: 'local', outcome: 'ok' }]);
  });
});
