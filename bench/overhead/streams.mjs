// Streaming measurements with a small undici client: time to the first `data:` event that carries
// content, total time, content chunks; and many streams held open at once.
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { rssKb } from './procfs.mjs';
import { percentile } from './stats.mjs';

export function poolFor(target, connections) {
  return new Pool(new URL(target.url).origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
}

/**
 * Sends one streaming request; resolves with { status, ttfbMs, totalMs, chunks, done, error }.
 * ttfbMs: from just before the request is sent to the arrival of the body chunk holding the first
 * event with non-empty `delta.content`. `onFirst` / `onEnd` let a caller track open streams.
 */
export async function streamOnce(pool, target, body, { signal, onFirst } = {}) {
  const t0 = performance.now();
  const result = { status: 0, ttfbMs: Number.NaN, totalMs: Number.NaN, chunks: 0, done: false, error: undefined, headers: {} };
  try {
    const res = await pool.request({
      method: 'POST',
      path: `${new URL(target.url).pathname}/chat/completions`,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...target.headers },
      body,
      signal,
    });
    result.status = res.statusCode;
    result.headers = res.headers;
    res.body.setEncoding('utf8');
    let buffer = '';
    for await (const text of res.body) {
      buffer += text;
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        for (const line of event.split('\n')) {
          if (!line.startsWith('data:')) continue;
          const data = line.slice(5).trim();
          if (data === '[DONE]') {
            result.done = true;
            continue;
          }
          const json = JSON.parse(data);
          if (json.error) result.error ??= `error event: ${JSON.stringify(json.error).slice(0, 200)}`;
          const content = json.choices?.[0]?.delta?.content;
          if (typeof content === 'string' && content.length > 0) {
            if (result.chunks === 0) {
              result.ttfbMs = performance.now() - t0;
              onFirst?.();
            }
            result.chunks++;
          }
        }
      }
    }
    result.totalMs = performance.now() - t0;
    if (result.status !== 200) result.error ??= `HTTP ${result.status}`;
    else if (!result.done) result.error ??= 'stream ended without [DONE]';
  } catch (err) {
    result.error = `${err.code ?? err.name}: ${err.message}`;
  }
  return result;
}

/** `count` streams one after another (at most `maxS` seconds); p50/p99 TTFB, total time, chunks/s. */
export async function sequentialStreams(target, body, { count, maxS, expectChunks, countHeader }) {
  const pool = poolFor(target, 1);
  const ttfb = [];
  const total = [];
  const rate = [];
  let errors = 0;
  let firstError;
  const headerCounts = {};
  const deadline = performance.now() + maxS * 1000;
  try {
    for (let i = 0; i < count && performance.now() < deadline; i++) {
      const r = await streamOnce(pool, target, body);
      if (countHeader) {
        const value = String(r.headers[countHeader] ?? '(none)');
        headerCounts[value] = (headerCounts[value] ?? 0) + 1;
      }
      const bad = r.error ?? (expectChunks && r.chunks !== expectChunks ? `${r.chunks} content chunks, expected ${expectChunks}` : undefined);
      if (bad) {
        errors++;
        firstError ??= bad;
        continue;
      }
      ttfb.push(r.ttfbMs);
      total.push(r.totalMs);
      rate.push((r.chunks * 1000) / r.totalMs);
    }
  } finally {
    await pool.close();
  }
  return {
    n: ttfb.length,
    ttfbP50: percentile(ttfb, 50),
    ttfbP99: percentile(ttfb, 99),
    totalP50: percentile(total, 50),
    totalP99: percentile(total, 99),
    chunksPerS: percentile(rate, 50),
    errors,
    firstError,
    ...(countHeader ? { headerCounts } : {}),
  };
}

/**
 * Opens `count` streams at once against a slow upstream and holds them until they finish.
 * Samples `rssPid`'s resident memory every 100 ms; counts errors (any non-200, error event,
 * missing [DONE], wrong chunk count, client-side failure).
 */
export async function openStreams(target, body, { count, expectChunks, rssPid, maxS }) {
  const pool = poolFor(target, count + 10);
  const abort = new AbortController();
  setMaxListeners(count + 10, abort.signal); // one listener per stream is expected here
  const cap = setTimeout(() => abort.abort(new Error(`streams still open after ${maxS} s`)), maxS * 1000);
  const rssIdleKb = rssKb(rssPid);
  let rssPeakKb = rssIdleKb;
  let open = 0;
  let peakOpen = 0;
  const sampler = setInterval(() => {
    try {
      rssPeakKb = Math.max(rssPeakKb, rssKb(rssPid));
    } catch {
      // process gone: reported as an error below
    }
  }, 100);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const runs = [];
  try {
    for (let i = 0; i < count; i++) {
      const run = streamOnce(pool, target, body, {
        signal: abort.signal,
        onFirst: () => {
          open++;
          peakOpen = Math.max(peakOpen, open);
        },
      }).then((r) => {
        if (r.chunks > 0) open--;
        return r;
      });
      runs.push(run);
      // Ramp up in steps of 50 so the listen backlogs are not flooded with SYNs at once.
      if (i % 50 === 49) await sleep(5);
    }
    const results = await Promise.all(runs);
    const wallS = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    rssPeakKb = Math.max(rssPeakKb, rssKb(rssPid));
    const failures = results.filter((r) => r.error || (expectChunks && r.chunks !== expectChunks));
    const reasons = {};
    for (const r of failures) {
      const reason = r.error ?? `${r.chunks} content chunks`;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    return {
      streams: count,
      errors: failures.length,
      reasons,
      peakOpen,
      rssIdleMb: rssIdleKb / 1024,
      rssPeakMb: rssPeakKb / 1024,
      ttfbP50: percentile(results.map((r) => r.ttfbMs).filter(Number.isFinite), 50),
      ttfbP99: percentile(results.map((r) => r.ttfbMs).filter(Number.isFinite), 99),
      wallS,
      // This (client) process's CPU over the run, all threads: near 100 × threads means the generator saturates.
      clientCpuPct: ((cpu.user + cpu.system) / 1000 / (wallS * 1000)) * 100,
    };
  } finally {
    clearTimeout(cap);
    clearInterval(sampler);
    await pool.destroy();
  }
}
