import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { EVENT_CONTENT, EVENT_ERROR, EVENT_FINISH, newFacts } from '../protocols/core/event-facts.js';
import { mergeUsage, type Usage } from '../protocols/core/usage.js';
import { errorText } from '../util/error-text.js';
import { networkFailure } from '../util/network-error.js';
import { sendRetryingStale } from '../util/stale-socket-pool.js';
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
  /** From the upstream's usage, when it reports them: prompt tokens, and how many came from its prompt cache. */
  promptTokens: number | null;
  cachedTokens: number | null;
  /** The tier that answered, when a proxy says so (x-llm-route-tier). */
  servedBy: string | null;
  /** Sent again on a new connection because a pooled socket was stale (not an error). */
  staleRetries: number;
}

export interface Failure {
  ok: false;
  /** A short machine word, like connection_refused, timeout, server_error. */
  reason: string;
  status: number | null;
  message: string;
  staleRetries: number;
}

type Measured = Omit<Success, 'staleRetries'> | Omit<Failure, 'staleRetries'>;

export type Sample = Success | Failure;

/**
 * Sends one streaming request with `prompt` and times it; never throws, never outlives
 * target.timeoutMs. A stale pooled socket is retried once on a new connection, and the clock
 * restarts with that retry: what is measured is the server, not a socket it had closed.
 */
export async function measureRequest(pool: Dispatcher, target: BenchTarget, prompt: string): Promise<Sample> {
  let staleRetries = 0;
  const sample = await measure(pool, target, prompt, () => staleRetries++);
  return { ...sample, staleRetries } as Sample;
}

async function measure(pool: Dispatcher, target: BenchTarget, prompt: string, onStale: () => void): Promise<Measured> {
  const abort = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, target.timeoutMs);
  const reading = new StreamReading(target);
  const request = target.request(prompt);
  let startedAt = performance.now();
  try {
    const response = await sendRetryingStale(
      pool,
      target.origin,
      (dispatcher) =>
        dispatcher.request({
          method: 'POST',
          path: request.path,
          headers: request.headers,
          body: request.body,
          signal: abort.signal,
          // undici's own timers are coarse and off: the timer above bounds the whole request.
          headersTimeout: 0,
          bodyTimeout: 0,
        }),
      {
        connectTimeout: target.connectTimeoutMs,
        // Sent again on a connection of its own: timed from there.
        onStale: () => {
          startedAt = performance.now();
          onStale();
        },
      },
    );
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

/** The events of one response body, read through the target's wire codec. */
class StreamReading {
  firstContentAt: number | null = null;
  streamError: string | null = null;
  private contentEvents = 0;
  private usage: Usage | undefined;
  private readonly parser;
  private readonly facts = newFacts();
  private readonly reader;
  private chunkAt = 0;

  constructor(target: BenchTarget) {
    this.parser = target.wire.framer();
    this.reader = target.wire.reader();
  }

  push(chunk: Buffer, at: number): void {
    this.chunkAt = at;
    this.parser.push(chunk, this.onEvent);
  }

  end(at: number): void {
    this.chunkAt = at;
    this.parser.flush(this.onEvent);
  }

  result(startedAt: number, endedAt: number, servedBy: string | null): Measured {
    if (this.streamError !== null) return { ok: false, reason: 'stream_error', status: null, message: this.streamError };
    if (this.firstContentAt === null) {
      return { ok: false, reason: 'empty_stream', status: null, message: 'the stream ended without a content event' };
    }
    const usage = this.usage;
    return {
      ok: true,
      ttftMs: this.firstContentAt - startedAt,
      totalMs: endedAt - startedAt,
      outputTokens: usage ? usage.completion_tokens : this.contentEvents,
      tokenSource: usage ? 'usage' : 'counted',
      promptTokens: usage ? usage.prompt_tokens : null,
      cachedTokens: usage?.cached_tokens ?? null,
      servedBy,
    };
  }

  private readonly onEvent = (_raw: Buffer, data: string | null): void => {
    if (data === null || this.streamError !== null) return;
    const facts = this.facts;
    this.reader.read(data, facts);
    if (facts.flags & EVENT_ERROR) {
      this.streamError = `error event in the stream: ${errorText(data) ?? 'no message'}`;
      return;
    }
    // Anthropic reports usage in pieces (input first, output at the end).
    if (facts.usage) this.usage = mergeUsage(this.usage, facts.usage);
    if (facts.flags & EVENT_CONTENT) {
      this.firstContentAt ??= this.chunkAt;
      // A finish event counts as content for the commit point, but usually carries no token.
      if (!(facts.flags & EVENT_FINISH)) this.contentEvents++;
    }
  };
}

function statusFailure(target: BenchTarget, status: number, body: string, headers: IncomingHttpHeaders): Omit<Failure, 'staleRetries'> {
  const verdict = target.wire.classifyStatus(status, body, headers);
  return { ok: false, reason: verdict.reason, status, message: `HTTP ${status}: ${verdict.message}` };
}

function transportFailure(error: unknown, afterFirstToken: boolean): Omit<Failure, 'staleRetries'> {
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
