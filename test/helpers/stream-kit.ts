import { afterEach } from 'vitest';
import { chunk, FakeUpstream, type Script } from './fake-upstream.js';
import { type RunningProxy, sseData, startProxy } from './proxy.js';

/**
 * Shared pieces for the stream failover suites: per-test cleanup, polling, socket-close
 * checks, metrics and SSE parsing, and the upstream misbehaviours the suites script.
 */

/** Registers an afterEach that closes every fake and proxy made through the returned factories. */
export function harness(): {
  fake(): Promise<FakeUpstream>;
  proxy(...args: Parameters<typeof startProxy>): Promise<RunningProxy>;
  defer(fn: () => Promise<void> | void): void;
} {
  let cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    const fns = cleanup.reverse();
    cleanup = [];
    for (const fn of fns) await fn();
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

/** Polls `fn` until it returns something other than undefined/false; throws after `timeoutMs`. */
export async function waitFor<T>(fn: () => T | undefined | false | null, timeoutMs = 3000, what = 'condition'): Promise<T> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const value = fn();
    if (value !== undefined && value !== false && value !== null) return value;
    if (performance.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** When the socket that carried request `index` at `fake` closed (performance.now()); waits for it. */
export function socketClosed(fake: FakeUpstream, index = 0, timeoutMs = 3000): Promise<number> {
  return waitFor(() => {
    const req = fake.requests[index];
    return req ? fake.socketClosedAt.get(req.socketId) : undefined;
  }, timeoutMs, `the socket of request #${index} at the fake upstream to close`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---- metrics and logs --------------------------------------------------------------

export async function metricsText(p: RunningProxy): Promise<string> {
  const res = await fetch(`${p.origin}/metrics`);
  return res.text();
}

/** The value of the sample `name` whose labels include `labels`; undefined when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[l[1]] = l[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** The request-log line of the (first) finished request, waiting for it to be written. */
export function requestLog(p: RunningProxy, timeoutMs = 3000): Promise<Record<string, unknown>> {
  return waitFor(() => p.logs.find((l) => l.event === 'request'), timeoutMs, 'the request log line');
}

// ---- SSE ---------------------------------------------------------------------------

/** Every data payload, JSON-parsed when it is JSON ("[DONE]" stays a string). */
export function sseEvents(text: string): unknown[] {
  return sseData(text).map((d) => {
    try {
      return JSON.parse(d) as unknown;
    } catch {
      return d;
    }
  });
}

type ChunkLike = { error?: { code?: string }; choices?: Array<{ delta?: { role?: string } }>; usage?: unknown };

export function errorEvents(text: string): Array<{ error: { code?: string; message?: string } }> {
  return sseEvents(text).filter((e): e is { error: { code?: string } } => typeof e === 'object' && e !== null && 'error' in e);
}

export function roleChunks(text: string): number {
  return sseEvents(text).filter((e) => ((e as ChunkLike)?.choices ?? []).some((c) => c.delta?.role !== undefined)).length;
}

export function usageOnlyChunks(text: string): unknown[] {
  return sseEvents(text).filter((e) => {
    const c = e as ChunkLike;
    return typeof c === 'object' && c !== null && Array.isArray(c.choices) && c.choices.length === 0 && c.usage !== undefined;
  });
}

// ---- upstream misbehaviours --------------------------------------------------------

/** An event marked as coming from `tag` (in the chunk id), so a test can prove it never reached the client. */
export function taggedChunk(tag: string, delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { ...chunk(delta, finish), id: `chatcmpl-${tag}` };
}

/** 200 + SSE headers, then nothing until the proxy hangs up. */
export const headersThenSilence: Script = async (ctx) => {
  ctx.startStream();
  await ctx.closed;
};

/** A role-only chunk (no content: does not commit), then silence. */
export function roleThenSilence(tag: string): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.event(taggedChunk(tag, { role: 'assistant', content: '' }));
    await ctx.closed;
  };
}

/** Reads the request, never answers. */
export const neverAnswer: Script = async (ctx) => {
  await ctx.closed;
};

/** Destroys the socket at once: a reset before any response header. */
export const resetAtOnce: Script = (ctx) => ctx.destroy();
