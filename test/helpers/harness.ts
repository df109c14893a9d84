import { connect } from 'node:net';
import { afterEach } from 'vitest';
import { FakeUpstream } from './fake-upstream.js';
import { type RunningProxy, startProxy } from './proxy.js';

/**
 * The one test harness: per-test resources closed after each test, polling, socket-close
 * checks, request-log lines, metrics, and raw-socket exchanges. Fake upstream scripts live in
 * fake-upstream.ts, SSE parsing beside the proxy helpers in proxy.ts.
 */

/**
 * Per-test resources that are closed after each test, newest first. Call once at the top
 * level of a test file. Every resource is closed even when one fails to; the failure is then
 * the test's.
 */
export function useHarness(): {
  fake(): Promise<FakeUpstream>;
  proxy(...args: Parameters<typeof startProxy>): Promise<RunningProxy>;
  defer(fn: () => unknown): void;
} {
  let cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    const fns = cleanup.reverse();
    cleanup = [];
    const errors: unknown[] = [];
    for (const fn of fns) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, "closing the test's resources failed");
  });
  return {
    async fake() {
      const f = await FakeUpstream.start();
      cleanup.push(() => f.close());
      return f;
    },
    async proxy(...args) {
      const p = await startProxy(...args);
      cleanup.push(() => p.close());
      return p;
    },
    defer(fn) {
      cleanup.push(fn);
    },
  };
}

/**
 * Polls `check` until it returns a truthy value (a throw counts as not yet); at the timeout,
 * throws the last error or says what it waited for.
 */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 3000, what = 'condition'): Promise<NonNullable<T>> {
  const until = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (performance.now() > until) {
      throw last instanceof Error ? last : new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(5);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** When the socket that carried request `index` at `fake` closed (performance.now()); waits for it. */
export function socketClosed(fake: FakeUpstream, index = 0, timeoutMs = 3000): Promise<number> {
  return waitFor(
    () => {
      const req = fake.requests[index];
      return req ? fake.socketClosedAt.get(req.socketId) : undefined;
    },
    timeoutMs,
    `the socket of request #${index} at the fake upstream to close`,
  );
}

/** The request-log line of the (first) finished request, waiting for it to be written. */
export function requestLog(p: RunningProxy, timeoutMs = 3000): Promise<Record<string, unknown>> {
  return waitFor(() => p.logs.find((l) => l.event === 'request'), timeoutMs, 'the request log line');
}

/** The request log line of one request id (waits for it to be written). */
export function logLine(proxy: RunningProxy, id: string | null): Promise<Record<string, unknown>> {
  return waitFor(() => proxy.logs.find((l) => l.id === id), 3000, `log line of request ${id}`);
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text format into samples (comments skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[2]) {
      for (const l of m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (one sample when they name them all); undefined when none. */
export function metric(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length === 0) return undefined;
  return found.reduce((sum, s) => sum + s.value, 0);
}

export async function fetchMetrics(proxy: RunningProxy, headers: Record<string, string> = {}): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(`${proxy.origin}/metrics`, { headers });
  const text = await res.text();
  return { text, samples: parseMetrics(text) };
}

/** Resolves with the error code when a new TCP connection to the port fails, null when it succeeds. */
export function tryConnect(port: number, host = '127.0.0.1'): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(null);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** Sends raw bytes on a fresh socket; resolves with everything the server sent until it closed (or `waitMs`). */
export function rawExchange(port: number, bytes: string | Buffer, opts: { waitMs?: number; destroyAfterWrite?: boolean } = {}): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let received = '';
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(done, opts.waitMs ?? 2000);
    socket.on('data', (d) => (received += d.toString('latin1')));
    socket.once('close', done);
    socket.once('error', done);
    socket.once('connect', () => {
      socket.write(bytes);
      if (opts.destroyAfterWrite) setTimeout(done, 20);
    });
  });
}

/** Reads a fetch body to the end; returns the text and the error that cut it (if any). */
export async function readAll(res: Response): Promise<{ text: string; error: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return { text, error: null };
  } catch (error) {
    return { text, error };
  }
}

/** Expects an OpenAI-shaped error body and returns its `error` object. */
export function openaiError(body: unknown): { message: string; type: string; code: unknown; [k: string]: unknown } {
  const error = (body as { error?: unknown }).error as { message: string; type: string; code: unknown } | undefined;
  if (!error || typeof error !== 'object') throw new Error(`not an OpenAI error body: ${JSON.stringify(body)}`);
  if (typeof error.message !== 'string' || error.message === '') throw new Error(`error.message missing: ${JSON.stringify(body)}`);
  if (typeof error.type !== 'string' || error.type === '') throw new Error(`error.type missing: ${JSON.stringify(body)}`);
  if (!('code' in error)) throw new Error(`error.code missing: ${JSON.stringify(body)}`);
  return error;
}
