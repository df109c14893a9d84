import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { EVENT_CONTENT, EVENT_ERROR, EVENT_FINISH, type EventFacts } from '../providers/types.js';
import { SseParser } from '../sse/parser.js';
import { errorText } from '../util/error-text.js';
import { networkFailure } from '../util/network-error.js';
import type { BenchTarget } from './targets.js';

/** One streamed request that delivered content. */
export interface Success {
  ok: true;
  /** From just before dispatch to the arrival of the first event the adapter flags as content. */
  ttftMs: number;
  /** From just before dispatch to the end of the body. */
  totalMs: number;
  outputTokens: number;
  /** `usage`: the upstream's completion_tokens; `counted`: content events, about one token each. */
  tokenSource: 'usage' | 'counted';
  /** The tier that answered, when a proxy says so (x-llm-route-tier). */
  servedBy: string | null;
}

export interface Failure {
  ok: false;
  /** A short machine word, like connection_refused, timeout, server_error. */
  reason: string;
  status: number | null;
  message: string;
}

export type Sample = Success | Failure;

/** Sends one streaming request and times it; never throws, never outlives target.timeoutMs. */
export async function measureRequest(pool: Dispatcher, target: BenchTarget): Promise<Sample> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, target.timeoutMs);
  const reading = new StreamReading(target);
  const startedAt = performance.now();
  try {
    const response = await pool.request({
      method: 'POST',
      path: target.request.path,
      headers: target.request.headers,
      body: target.request.body,
      signal: abort.signal,
      // undici's own timers are coarse and off: the timer above bounds the whole request.
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    if (response.statusCode < 200 || response.statusCode >= 300) {
      return statusFailure(target, response.statusCode, await response.body.text(), response.headers);
    }
    if (isJson(response.headers)) {
      await response.body.dump();
      return { ok: false, reason: 'not_a_stream', status: response.statusCode, message: 'answered JSON to a streaming request' };
    }
    for await (const chunk of response.body) {
      reading.push(chunk as Buffer, performance.now());
      if (reading.streamError !== null) break; // leaving the loop destroys the body: the request is aborted
    }
    const endedAt = performance.now();
    reading.end(endedAt);
    return reading.result(startedAt, endedAt, servedBy(response.headers));
  } catch (error) {
    if (timedOut) {
      const phase = reading.firstContentAt === null ? 'before the first token' : 'after the first token';
      return { ok: false, reason: 'timeout', status: null, message: `no complete answer within ${target.timeoutMs} ms (${phase})` };
    }
    return transportFailure(error, reading.firstContentAt !== null);
  } finally {
    clearTimeout(timer);
  }
}

/** The events of one response body, read through the target's adapter. */
class StreamReading {
  firstContentAt: number | null = null;
  streamError: string | null = null;
  private contentEvents = 0;
  private usageTokens: number | undefined;
  private readonly parser = new SseParser();
  private readonly facts: EventFacts = { flags: 0, usage: undefined };
  private chunkAt = 0;

  constructor(private readonly target: BenchTarget) {}

  push(chunk: Buffer, at: number): void {
    this.chunkAt = at;
    this.parser.push(chunk, this.onEvent);
  }

  end(at: number): void {
    this.chunkAt = at;
    this.parser.flush(this.onEvent);
  }

  result(startedAt: number, endedAt: number, servedBy: string | null): Sample {
    if (this.streamError !== null) return { ok: false, reason: 'stream_error', status: null, message: this.streamError };
    if (this.firstContentAt === null) {
      return { ok: false, reason: 'empty_stream', status: null, message: 'the stream ended without a content event' };
    }
    const fromUsage = this.usageTokens !== undefined;
    return {
      ok: true,
      ttftMs: this.firstContentAt - startedAt,
      totalMs: endedAt - startedAt,
      outputTokens: fromUsage ? (this.usageTokens as number) : this.contentEvents,
      tokenSource: fromUsage ? 'usage' : 'counted',
      servedBy,
    };
  }

  private readonly onEvent = (_raw: Buffer, data: string | null): void => {
    if (data === null || this.streamError !== null) return;
    const facts = this.facts;
    this.target.adapter.inspectEvent(data, facts);
    if (facts.flags & EVENT_ERROR) {
      this.streamError = `error event in the stream: ${errorText(data) ?? 'no message'}`;
      return;
    }
    if (facts.usage) this.usageTokens = facts.usage.completion_tokens;
    if (facts.flags & EVENT_CONTENT) {
      this.firstContentAt ??= this.chunkAt;
      // A finish event counts as content for the commit point, but usually carries no token.
      if (!(facts.flags & EVENT_FINISH)) this.contentEvents++;
    }
  };
}

function statusFailure(target: BenchTarget, status: number, body: string, headers: IncomingHttpHeaders): Failure {
  const verdict = target.adapter.classifyStatus(status, body, headers);
  return { ok: false, reason: verdict.reason, status, message: `HTTP ${status}: ${verdict.message}` };
}

function transportFailure(error: unknown, afterFirstToken: boolean): Failure {
  // A socket that breaks once tokens flowed is a broken stream, not a refused request.
  const reason = afterFirstToken ? 'broken_stream' : (networkFailure(error).kind ?? 'network_error');
  return { ok: false, reason, status: null, message: errorMessage(error) };
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : '';
  return `${error.message}${cause}`;
}

function isJson(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && type.includes('application/json');
}

function servedBy(headers: IncomingHttpHeaders): string | null {
  const tier = headers['x-llm-route-tier'];
  return typeof tier === 'string' ? tier : null;
}
