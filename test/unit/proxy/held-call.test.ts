import type { Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Tier } from '../../../src/config/schema.js';
import { UpstreamCall } from '../../../src/protocols/call.js';
import { clientCodec } from '../../../src/protocols/registry.js';
import { isUnsupported } from '../../../src/protocols/core/types.js';
import { toolTextScope } from '../../../src/protocols/tool-text/scope.js';
import type { AttemptError } from '../../../src/proxy/attempt-error.js';
import type { LastTier } from '../../../src/proxy/last-tier.js';
import { StreamAttempt } from '../../../src/proxy/stream-attempt.js';
import { MAX_ANSWER_BYTES } from '../../../src/proxy/stream-errors.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { TelemetryEvent } from '../../../src/telemetry/events.js';
import { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { chunk } from '../../helpers/fake-upstream.js';
import { RecordingPort, sseEvent, tierAt } from '../../helpers/proxy-parts.js';
import { WRITE_CHAT_TOOLS } from '../../helpers/tool-text-kit.js';

/**
 * A tool call written as text, held by a StreamAttempt while it grows (docs/tool-text.md), over minutes of fake time: vitest's fake timers and clock, and an upstream played
 * through undici's dispatch-handler interface (what a pool calls), so every timer is exact and
 * no test waits for real. What the client gets is the commit port's recording sink.
 */

/** The upstream side of one dispatched request: headers, body chunks and the end, when the test says. */
class PlayedUpstream {
  handler: Dispatcher.DispatchHandler | null = null;
  abortedWith: Error | null = null;
  private readonly controller = {
    aborted: false,
    paused: false,
    reason: null,
    abort: (reason: Error) => {
      this.controller.aborted = true;
      this.abortedWith = reason;
    },
    pause: () => undefined,
    resume: () => undefined,
  };

  /** The pool the attempt dispatches on. */
  readonly pool = {
    dispatch: (_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
      this.handler = handler;
      handler.onRequestStart?.(this.controller as unknown as Dispatcher.DispatchController, {});
      return true;
    },
  } as unknown as Dispatcher;

  headers(): void {
    this.handler?.onResponseStart?.(this.controller as unknown as Dispatcher.DispatchController, 200, { 'content-type': 'text/event-stream' }, 'OK');
  }

  send(bytes: string | Buffer): void {
    this.handler?.onResponseData?.(this.controller as unknown as Dispatcher.DispatchController, typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  }

  content(text: string): void {
    this.send(sseEvent(chunk({ content: text })));
  }
}

interface Options {
  timeouts?: Partial<Tier['timeouts']>;
  ttftBudgetMs?: number;
  lastTier?: LastTier;
}

function start(opts: Options = {}) {
  const tier = tierAt('http://127.0.0.1:1/v1', { idle_ms: 5_000, total_ms: 10_000, ...opts.timeouts }, 'local');
  const parsed = clientCodec('chat').parse({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'write' }], tools: WRITE_CHAT_TOOLS }, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const call = UpstreamCall.prepare(tier, clientCodec('chat'), parsed.request, toolTextScope(parsed.request, clientCodec('chat')));
  if (isUnsupported(call)) throw new Error(call.unsupported);
  const upstream = new PlayedUpstream();
  const port = new RecordingPort();
  const bus = new TelemetryBus();
  const telemetry: TelemetryEvent[] = [];
  bus.subscribe((event) => telemetry.push(event));
  const attempt = new StreamAttempt({
    tier,
    call,
    pool: upstream.pool,
    client: new ClientLifetime(),
    output: call.streamOutput(),
    port,
    ordinal: 1,
    telemetry: bus,
    route: 'chat',
    requestId: 'req-1',
    ttftBudgetMs: opts.ttftBudgetMs ?? 1_000,
    ttftLimit: 'ttft_timeout',
    lastTier: opts.lastTier,
  });
  let settled: Awaited<StreamAttempt['committed']> | null = null;
  void attempt.committed.then((result) => (settled = result));
  upstream.headers();
  upstream.send(sseEvent(chunk({ role: 'assistant', content: '' })));
  return { attempt, upstream, port, telemetry, settled: () => settled };
}

const OPEN = '<tool_call>\n{"name": "Write", "arguments": {"file_path": "a.py", "content": "';
const CLOSE = '"}}\n</tool_call>';
const FINISH = sseEvent(chunk({}, 'stop')) + sseEvent('[DONE]');

function failureOf(settled: ReturnType<ReturnType<typeof start>['settled']>): AttemptError {
  if (!settled || settled.committed) throw new Error(`expected a failure, got ${settled ? 'a commit' : 'nothing yet'}`);
  return settled.error;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('a call written as text, held on progress', () => {
  it('a Write call written over a minute (ttft_ms 1 s, idle_ms 5 s, total_ms 10 s) is never cut: one commit at its close, with the call', async () => {
    const { attempt, upstream, port, telemetry, settled } = start();
    await vi.advanceTimersByTimeAsync(300);
    upstream.content(OPEN);
    let written = '';
    for (let s = 0; s < 120; s++) {
      await vi.advanceTimersByTimeAsync(500);
      const piece = `line ${s} of the file\\n`;
      written += piece;
      upstream.content(piece);
    }
    expect(settled()).toBeNull();
    expect(port.commits).toEqual([]);
    upstream.content(CLOSE);
    upstream.send(FINISH);
    const result = await attempt.committed;
    if (!result.committed) throw result.error;
    // The tier's TTFT: its form's first bytes, not the minute the call took.
    expect(result.elapsedMs).toBe(300);
    expect(port.commits).toEqual([{ tier: 'local', attempts: 1 }]);
    const body = port.sink.text();
    expect(body).not.toContain('tool_call>');
    const args = body
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .flatMap((line) => JSON.parse(line.slice(6)).choices[0]?.delta.tool_calls ?? [])
      .map((call: { function: { arguments: string } }) => call.function.arguments)
      .join('');
    expect(JSON.parse(args)).toEqual({ file_path: 'a.py', content: JSON.parse(`"${written}"`) });
    expect(body).toContain('"finish_reason":"tool_calls"');
    // Its growth was told when it began, about once a second, and when it ended: never once per chunk.
    const told = telemetry.filter((event) => event.type === 'tool_text_hold');
    expect(told.length).toBeGreaterThanOrEqual(55);
    expect(told.length).toBeLessThanOrEqual(62);
    expect(told[0]).toMatchObject({ id: 'req-1', route: 'chat', tier: 'local', ms: 0 });
    expect(told.at(-2)).toMatchObject({ ms: expect.any(Number) });
    expect((told.at(-2) as { ms: number }).ms).toBeGreaterThanOrEqual(59_000);
    expect(told.at(-1)).toMatchObject({ chars: 0 });
  });

  it('idle_ms of silence ends it: bad_tool_call exactly idle_ms after the last chunk, the upstream cancelled', async () => {
    const { upstream, settled } = start({ timeouts: { idle_ms: 5_000 } });
    upstream.content(OPEN);
    for (let s = 0; s < 10; s++) {
      await vi.advanceTimersByTimeAsync(4_000);
      upstream.content('more ');
    }
    await vi.advanceTimersByTimeAsync(4_999);
    expect(settled()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(failureOf(settled())).toMatchObject({
      reason: 'bad_tool_call',
      failover: true,
      blame: 'tier',
      message: expect.stringContaining('stalled: no content for idle_ms (5000 ms)'),
    });
    expect(upstream.abortedWith).not.toBeNull();
  });

  it('stream_max_ms ends a form still growing at the cap (counted from the attempt start)', async () => {
    const { upstream, settled } = start({ timeouts: { stream_max_ms: 30_000 } });
    await vi.advanceTimersByTimeAsync(200);
    upstream.content(OPEN);
    for (let s = 0; s < 59; s++) {
      await vi.advanceTimersByTimeAsync(500);
      upstream.content('more ');
    }
    expect(settled()).toBeNull(); // 29.7 s in
    await vi.advanceTimersByTimeAsync(300);
    expect(failureOf(settled())).toMatchObject({ reason: 'bad_tool_call', message: expect.stringContaining('still open at stream_max_ms (30000 ms)') });
  });

  it('an answer past the answer cap while held: bad_tool_call', async () => {
    const { upstream, settled } = start();
    upstream.content(OPEN);
    upstream.send(Buffer.allocUnsafe(MAX_ANSWER_BYTES).fill(0x61));
    await vi.advanceTimersByTimeAsync(0);
    expect(failureOf(settled())).toMatchObject({ reason: 'bad_tool_call', message: expect.stringContaining('larger than the answer cap') });
  });

  it('an answer that begins nothing within ttft_ms still times out on it', async () => {
    const { settled } = start();
    await vi.advanceTimersByTimeAsync(999);
    expect(settled()).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(failureOf(settled())).toMatchObject({ reason: 'ttft_timeout' });
  });

  it('on the last tier the request tries, a stalled form goes out as written, then the idle error ends the stream', async () => {
    const last = { isLast: () => true, settled: async () => true } as unknown as LastTier;
    const { attempt, upstream, port } = start({ lastTier: last });
    upstream.content(OPEN);
    upstream.content('half a file');
    await vi.advanceTimersByTimeAsync(5_000);
    const result = await attempt.committed;
    if (!result.committed) throw result.error;
    const end = await result.relay.finished;
    expect(end.interruption).toMatchObject({ reason: 'idle_timeout' });
    const text = port.sink.text();
    expect(text).toContain(JSON.stringify(chunk({ content: OPEN })).slice(1, 40));
    expect(text).toContain('half a file');
    expect(text).toContain('"code":"stream_interrupted"');
  });

  it("a call the client cannot run waits while the plan is still counting a later tier: then goes out as written, the upstream's end kept", async () => {
    let known: boolean | undefined;
    let resolve!: () => void;
    const counted = new Promise<void>((r) => (resolve = r));
    const last = { isLast: () => known, settled: () => counted.then(() => known ?? false) } as unknown as LastTier;
    const { attempt, upstream, port } = start({ lastTier: last });
    upstream.content('<tool_call>\n{"name": "Nope", "arguments": {}}\n</tool_call>');
    upstream.send(FINISH);
    await vi.advanceTimersByTimeAsync(50);
    expect(port.commits).toEqual([]);
    known = true;
    resolve();
    const result = await attempt.committed;
    if (!result.committed) throw result.error;
    const end = await result.relay.finished;
    expect(end.interruption).toBeNull();
    expect(port.sink.text()).toContain('Nope');
    expect(port.sink.text().trim().endsWith('data: [DONE]')).toBe(true);
  });

  it('… or fails over once a later tier is known to fit', async () => {
    let known: boolean | undefined;
    let resolve!: () => void;
    const counted = new Promise<void>((r) => (resolve = r));
    const last = { isLast: () => known, settled: () => counted.then(() => known ?? false) } as unknown as LastTier;
    const { upstream, port, settled } = start({ lastTier: last });
    upstream.content('<tool_call>\n{"name": "Nope", "arguments": {}}\n</tool_call>');
    await vi.advanceTimersByTimeAsync(50);
    expect(settled()).toBeNull();
    known = false;
    resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(failureOf(settled())).toMatchObject({ reason: 'bad_tool_call', message: expect.stringContaining('"Nope"') });
    expect(port.commits).toEqual([]);
  });
});
