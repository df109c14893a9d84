import type { Dispatcher } from 'undici';
import type { Tier } from '../../src/config/schema.js';
import { UpstreamCall } from '../../src/protocols/call.js';
import { clientCodec } from '../../src/protocols/registry.js';
import { isUnsupported } from '../../src/protocols/core/types.js';
import { AttemptError, type Phase } from '../../src/proxy/attempt-error.js';
import { StreamAttempt } from '../../src/proxy/stream-attempt.js';
import type { CommitPort, StreamSink } from '../../src/proxy/stream-sink.js';
import type { AnswerReader } from '../../src/proxy/upstream-dispatch.js';
import { TelemetryBus } from '../../src/telemetry/bus.js';
import { ClientLifetime } from '../../src/util/client-lifetime.js';
import { createFreshConnection } from '../../src/providers/upstream-dispatcher.js';
import { createStaleAwarePool, withStaleRetry } from '../../src/util/stale-socket-pool.js';
import { tier } from './config.js';

/**
 * The small interfaces of the proxy's stream parts, recorded for unit tests
 * (test/unit/proxy/): where a committed stream's bytes go, the commit port, the reader of an
 * upstream's answer. The upstreams themselves are real servers (fake-upstream.ts).
 */

/** A chat tier named `name` calling the server at `url` (…/v1), with its timeouts overridden. */
export function tierAt(url: string, timeouts: Partial<Tier['timeouts']> = {}, name = 'a'): Tier {
  const base = tier(name);
  return { ...base, provider: { ...base.provider, base_url: url }, timeouts: { ...base.timeouts, ...timeouts } };
}

/** A Chat Completions request from a chat client, bound to `t` (relayed: the same protocol). */
export function chatCall(t: Tier, stream = true): UpstreamCall {
  const parsed = clientCodec('chat').parse({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream }, {});
  if (!parsed.ok) throw new Error(parsed.message);
  const call = UpstreamCall.prepare(t, clientCodec('chat'), parsed.request, null);
  if (isUnsupported(call)) throw new Error(call.unsupported);
  return call;
}

/** The project's own kind of pool for `t`'s provider (stale-aware, one connection, the stale-socket retry around it); `defer` is given its destroy. */
export function poolFor(t: Tier, defer: (fn: () => unknown) => void): Dispatcher {
  const stale = createStaleAwarePool(new URL(t.provider.base_url).origin, { connections: 1, pipelining: 1 });
  const pool = withStaleRetry(stale, () => createFreshConnection(t.provider, t.timeouts.connect_ms));
  defer(() => pool.destroy());
  return pool;
}

export interface AttemptOptions {
  ttftBudgetMs?: number;
  ttftLimit?: 'ttft_timeout' | 'deadline';
  timeouts?: Partial<Tier['timeouts']>;
  /** The tier's name (default `a`). */
  name?: string;
  /** Where its first content goes (default: a RecordingPort of its own). */
  port?: CommitPort;
  telemetry?: TelemetryBus;
}

/**
 * A streaming attempt on a chat tier at `url`, started as startStream starts one (ordinal 3,
 * route `chat`); `defer` is given what ends it when the test is over.
 */
export function startAttempt(url: string, defer: (fn: () => unknown) => void, opts: AttemptOptions = {}): { attempt: StreamAttempt; client: ClientLifetime } {
  const t = tierAt(url, opts.timeouts, opts.name);
  const call = chatCall(t);
  const client = new ClientLifetime();
  const attempt = new StreamAttempt({
    tier: t,
    call,
    pool: poolFor(t, defer),
    client,
    output: call.streamOutput(),
    port: opts.port ?? new RecordingPort(),
    ordinal: 3,
    telemetry: opts.telemetry ?? new TelemetryBus(),
    route: 'chat',
    ttftBudgetMs: opts.ttftBudgetMs ?? 10_000,
    ttftLimit: opts.ttftLimit ?? 'ttft_timeout',
  });
  defer(() => attempt.cut(new AttemptError('client_abort', 'test over', { phase: 'body', failover: false, retryable: false })));
  return { attempt, client };
}

/** A client's response: records each write and the end; `full` makes writes report backpressure until `drain()`. */
export class RecordingSink implements StreamSink {
  readonly writes: Buffer[] = [];
  /** The tail of each `end` call (a second one would be a bug). */
  readonly ends: Array<Buffer | null> = [];
  full = false;
  private drainWaiters: Array<() => void> = [];

  write(data: Buffer): boolean {
    this.writes.push(data);
    return !this.full;
  }

  onceDrain(resume: () => void): void {
    this.drainWaiters.push(resume);
  }

  /** How many writes there were at each `sendNow`. */
  readonly sentAfter: number[] = [];

  sendNow(): void {
    this.sentAfter.push(this.writes.length);
  }

  end(tail: Buffer | null): void {
    this.ends.push(tail);
  }

  /** The client caught up. */
  drain(): void {
    this.full = false;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resume of waiters) resume();
  }

  get waitingForDrain(): number {
    return this.drainWaiters.length;
  }

  /** Everything written, the tail included, as text. */
  text(): string {
    return Buffer.concat([...this.writes, ...this.ends.filter((t): t is Buffer => t !== null)]).toString('utf8');
  }
}

/** A commit port that answers with one RecordingSink and records each commit. */
export class RecordingPort implements CommitPort {
  readonly sink = new RecordingSink();
  readonly commits: Array<{ tier: string; attempts: number }> = [];

  commit(t: Tier, attempts: number): StreamSink {
    this.commits.push({ tier: t.name, attempts });
    return this.sink;
  }
}

export type ReaderCall =
  | { on: 'headers'; status: number; contentType: unknown }
  | { on: 'body'; bytes: string }
  | { on: 'end' }
  | { on: 'broken' | 'stop' | 'clientGone'; error: AttemptError };

/** An answer reader that records what the dispatch called, in order; `settled` resolves at the first end, break, stop or client gone. */
export class RecordingReader implements AnswerReader {
  readonly calls: ReaderCall[] = [];
  readonly settled: Promise<ReaderCall>;
  private settle!: (call: ReaderCall) => void;

  constructor(private readonly where: Phase = 'first_token') {
    this.settled = new Promise((resolve) => (this.settle = resolve));
  }

  onHeaders(status: number, headers: Record<string, unknown>): void {
    this.calls.push({ on: 'headers', status, contentType: headers['content-type'] });
  }

  onBody(chunk: Buffer): void {
    this.calls.push({ on: 'body', bytes: chunk.toString('utf8') });
  }

  onEnd(): void {
    this.record({ on: 'end' });
  }

  onBroken(error: AttemptError): void {
    this.record({ on: 'broken', error });
  }

  stop(error: AttemptError): void {
    this.record({ on: 'stop', error });
  }

  onClientGone(error: AttemptError): void {
    this.record({ on: 'clientGone', error });
  }

  phase(): Phase {
    return this.where;
  }

  /** The bytes of every body chunk, joined. */
  body(): string {
    return this.calls.map((c) => (c.on === 'body' ? c.bytes : '')).join('');
  }

  private record(call: ReaderCall): void {
    this.calls.push(call);
    this.settle(call);
  }
}

/** One SSE event's bytes as an upstream sends them: an object is JSON-encoded, a string sent as it is. */
export function sseEvent(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** A promise a test resolves when it wants a script to go on. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
