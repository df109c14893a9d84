import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Provider, Tier } from '../config/schema.js';
import type { UpstreamCall } from '../protocols/call.js';
import { AttemptError, type Phase, statusError, timeoutError, transportError } from './attempt-error.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { LastTier } from './last-tier.js';
import { isShutdown } from './shutdown.js';
import { answerTooLarge, MAX_ANSWER_BYTES } from './stream-errors.js';

type Controller = Dispatcher.DispatchController;

export interface AttemptInput {
  tier: Tier;
  /** The request bound to this tier: its wire, its upstream request, how its answer is shaped. */
  call: UpstreamCall;
  pool: Dispatcher;
  /** Ends when the client goes away, or with a ShutdownError when the server stops. */
  client: ClientLifetime;
  /** Whether the tier is the last the request will try (only when it reads tool calls written as text). */
  lastTier?: LastTier;
}

/**
 * What reads a 2xx answer: an attempt until it has its verdict, then (a committed stream) the
 * relay it handed over to. The dispatch calls exactly one reader, and only while it is live.
 */
export interface AnswerReader {
  onHeaders(status: number, headers: IncomingHttpHeaders): void;
  onBody(chunk: Buffer): void;
  onEnd(): void;
  /** The socket broke (reset, closed early) or the answer grew past its cap. */
  onBroken(err: AttemptError): void;
  /** The answer cannot be what was asked (a non-2xx status, the total timeout): ends with `err`. */
  stop(err: AttemptError): void;
  /** The client left, or the server is stopping (`err.reason` says which); the upstream is already cancelled. */
  onClientGone(err: AttemptError): void;
  /** Where the answer stands, for the phase of a failure now. */
  phase(): Phase;
}

/** Bytes of an error body kept for classification and pass-through. */
const MAX_ERROR_BODY = 64 * 1024;

/** Why an upstream that is slow to close after its terminator is cut. */
const LINGERED = new Error('upstream did not close after its terminator');

/** Each provider's origin, parsed once per config (providers are immutable snapshots), not once per attempt. */
const origins = new WeakMap<Provider, string>();

function originOf(provider: Provider): string {
  let origin = origins.get(provider);
  if (origin === undefined) origins.set(provider, (origin = new URL(provider.base_url).origin));
  return origin;
}

/**
 * One call to one upstream, as an undici dispatch handler: no stream objects between the
 * socket and us. It owns what every attempt shares (dispatching, the total timer until a
 * stream commits, aborting, a non-2xx body turned into a typed AttemptError) and hands a 2xx
 * answer to its reader, which decides what the body means. A stale pooled socket never reaches
 * it: the provider's dispatcher sends the request again (util/stale-socket-pool.ts).
 *
 * Abort ordering: `cancel()` aborts through undici's controller, which destroys the socket
 * synchronously for an in-flight request; a request still waiting for a connection is
 * aborted the moment undici hands it a socket, before a byte of it is written.
 */
export class UpstreamDispatch implements Dispatcher.DispatchHandler {
  readonly startedAt = performance.now();
  private isLive = true;
  private upstreamEnded = false;
  private reader: AnswerReader;
  private controller: Controller | null = null;
  private cancelReason: Error | null = null;
  private errorStatus = 0;
  private errorHeaders: IncomingHttpHeaders | null = null;
  /** A non-2xx body, kept only when there is one. */
  private errorChunks: Buffer[] | null = null;
  private errorBytes = 0;
  /** Bytes of the 2xx answer so far, held to MAX_ANSWER_BYTES. */
  private answerBytes = 0;
  private readonly totalTimer: NodeJS.Timeout;
  private lingerTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly input: AttemptInput,
    reader: AnswerReader,
  ) {
    this.reader = reader;
    input.client.onAbort(this.onClientAbort);
    this.totalTimer = setTimeout(UpstreamDispatch.totalExpired, input.tier.timeouts.total_ms, this);
  }

  /** Sends the request (once the reader holding this dispatch is whole: undici may call back at once). */
  start(): void {
    const { method, path, headers, body } = this.input.call.request;
    // origin: a pool knows its own; a proxy agent (HTTPS_PROXY) picks its route by it.
    this.input.pool.dispatch({ origin: originOf(this.input.tier.provider), path, method, headers, body, headersTimeout: 0, bodyTimeout: 0 }, this);
  }

  /** The call is still in use (waiting for its first content, or relaying): undici's callbacks matter. */
  get live(): boolean {
    return this.isLive;
  }

  get elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  /** undici has handed the request a connection. */
  get connected(): boolean {
    return this.controller !== null;
  }

  /**
   * From now on `reader` reads the answer (a committed stream's relay). total_ms ends here: a
   * committed stream that keeps flowing (a slow local model, a long answer) is bounded by its
   * relay's idle_ms and the answer's size cap, never cut while tokens still arrive.
   */
  handOver(reader: AnswerReader): void {
    this.reader = reader;
    clearTimeout(this.totalTimer);
  }

  /**
   * A tool call written as text began within the TTFT budget: total_ms no longer bounds the
   * attempt, which is held while bytes keep arriving (its idle_ms, stream_max_ms and the answer cap).
   */
  holdOpen(): void {
    clearTimeout(this.totalTimer);
  }

  /** The call is done with (failed before commit, or its relay ended): the total timer and the client's leaving no longer concern it. */
  finish(): void {
    this.isLive = false;
    clearTimeout(this.totalTimer);
    this.release();
  }

  /** Aborts the upstream request (idempotent) and closes its socket. */
  cancel(reason: Error): void {
    if (this.cancelReason) return;
    this.cancelReason = reason;
    this.release();
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
  }

  /** The answer is complete but the upstream has not closed: it gets `ms` to end cleanly (its socket then goes back to the pool). */
  lingerFor(ms: number): void {
    if (this.upstreamEnded) return;
    this.lingerTimer = setTimeout(UpstreamDispatch.lingerExpired, ms, this);
    this.lingerTimer.unref();
  }

  pause(): void {
    this.controller?.pause();
  }

  resume(): void {
    this.controller?.resume();
  }

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.cancelReason) controller.abort(this.cancelReason);
  }

  onResponseStart(_controller: Controller, statusCode: number, headers: IncomingHttpHeaders): void {
    if (!this.isLive) return;
    if (statusCode < 200 || statusCode >= 300) {
      this.errorStatus = statusCode;
      this.errorHeaders = headers;
      this.errorChunks = [];
      return;
    }
    this.reader.onHeaders(statusCode, headers);
  }

  onResponseData(_controller: Controller, chunk: Buffer): void {
    if (!this.isLive) return;
    if (this.errorChunks !== null) {
      this.errorChunks.push(chunk);
      this.errorBytes += chunk.length;
      // An error body that goes on and on: judge it by its start, no need to wait for the end.
      if (this.errorBytes >= MAX_ERROR_BODY) this.failWithStatus();
      return;
    }
    this.answerBytes += chunk.length;
    if (this.answerBytes > MAX_ANSWER_BYTES) return this.reader.onBroken(answerTooLarge());
    this.reader.onBody(chunk);
  }

  onResponseEnd(): void {
    this.upstreamEnded = true;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    if (!this.isLive) return;
    if (this.errorStatus !== 0) return this.failWithStatus();
    this.reader.onEnd();
  }

  onResponseError(_controller: Controller | null, err: Error): void {
    if (this.cancelReason || !this.isLive) return;
    this.reader.onBroken(transportError(err, this.errorStatus !== 0 ? 'headers' : this.reader.phase()));
  }

  /** A non-2xx answer: its status and (the start of) its body decide what the attempt's failure means. */
  private failWithStatus(): void {
    const body = Buffer.concat(this.errorChunks ?? []).subarray(0, MAX_ERROR_BODY);
    const headers = this.errorHeaders ?? {};
    const verdict = this.input.call.classifyStatus(this.errorStatus, body.toString('utf8'), headers);
    this.reader.stop(statusError(verdict, { status: this.errorStatus, headers, body }));
  }

  private release(): void {
    this.input.client.offAbort(this.onClientAbort);
  }

  private readonly onClientAbort = (): void => {
    const gone = clientGone(this.input.client, this.reader.phase());
    this.cancel(new Error(gone.message));
    this.reader.onClientGone(gone);
  };

  // Timer callbacks take the dispatch as their argument: no closure per call.
  private static totalExpired(dispatch: UpstreamDispatch): void {
    const reader = dispatch.reader;
    reader.stop(timeoutError('total_timeout', dispatch.input.tier.timeouts.total_ms, reader.phase()));
  }

  private static lingerExpired(dispatch: UpstreamDispatch): void {
    dispatch.cancel(LINGERED);
  }
}

/** Why an attempt ends when its client has gone: the client left, or the server is stopping. */
export function clientGone(client: ClientLifetime, phase: Phase): AttemptError {
  const [reason, message] = isShutdown(client.reason)
    ? (['shutdown', 'llm-route is shutting down'] as const)
    : (['client_abort', 'client disconnected'] as const);
  return new AttemptError(reason, message, { phase, failover: false, retryable: false, blame: null });
}
