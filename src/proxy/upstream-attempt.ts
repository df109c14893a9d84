import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { createFreshConnection } from '../providers/upstream-dispatcher.js';
import type { Tier } from '../config/schema.js';
import type { UpstreamCall } from '../protocols/call.js';
import { AttemptError, statusError, transportError } from './attempt-error.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { isShutdown } from './shutdown.js';
import { answerTooLarge, MAX_ANSWER_BYTES } from './stream-errors.js';
import { isStaleSocketFailure } from '../util/stale-socket.js';

type Controller = Dispatcher.DispatchController;

export interface AttemptInput {
  tier: Tier;
  /** The request bound to this tier: its wire, its upstream request, how its answer is shaped. */
  call: UpstreamCall;
  pool: Dispatcher;
  /** Ends when the client goes away, or with a ShutdownError when the server stops. */
  client: ClientLifetime;
}

/**
 * An attempt's one state. waiting: no verdict yet (a stream: before its first content);
 * relaying: a committed stream; done: it answered; failed: it did not. Callbacks from undici
 * after done or failed are ignored.
 */
export type AttemptPhase = 'waiting' | 'relaying' | 'done' | 'failed';

/** Bytes of an error body kept for classification and pass-through. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * One call to one upstream, as an undici dispatch handler: no stream objects between the
 * socket and us. Subclasses decide what a 2xx body means (a stream to commit, or a whole
 * answer). This base owns what both share: dispatching, aborting, collecting a non-2xx
 * body and turning it into a typed AttemptError.
 *
 * Abort ordering: `cancel()` aborts through undici's controller, which destroys the socket
 * synchronously for an in-flight request; a request still waiting for a connection is
 * aborted the moment undici hands it a socket, before a byte of it is written.
 */
export abstract class UpstreamAttempt implements Dispatcher.DispatchHandler {
  readonly startedAt = performance.now();
  protected phase: AttemptPhase = 'waiting';
  protected controller: Controller | null = null;
  private cancelReason: Error | null = null;
  /** The one connection of its own a stale-socket retry went out on. */
  private fresh: Dispatcher | null = null;
  private errorStatus = 0;
  private errorHeaders: IncomingHttpHeaders = {};
  private errorChunks: Buffer[] = [];
  private errorBytes = 0;
  /** Bytes of the 2xx answer so far, held to MAX_ANSWER_BYTES. */
  private answerBytes = 0;

  constructor(protected readonly input: AttemptInput) {
    input.client.onAbort(this.onClientAbort);
  }

  /** Still waiting for its verdict, or relaying: undici's callbacks matter. */
  protected get live(): boolean {
    return this.phase === 'waiting' || this.phase === 'relaying';
  }

  /** The attempt's outcome is settled: the client's leaving no longer concerns it. */
  protected release(): void {
    this.input.client.offAbort(this.onClientAbort);
    // The retry's own connection closes once its request is done (at once when cut short).
    if (this.fresh) void (this.cancelReason ? this.fresh.destroy() : this.fresh.close()).catch(() => undefined);
    this.fresh = null;
  }

  /** Sends the request. */
  protected dispatch(): void {
    this.dispatchOn(this.input.pool);
  }

  private dispatchOn(dispatcher: Dispatcher): void {
    const { method, path, headers, body } = this.input.call.request;
    // origin: a pool knows its own; a proxy agent (HTTPS_PROXY) picks its route by it.
    dispatcher.dispatch({ origin: new URL(this.input.tier.provider.base_url).origin, path, method, headers, body, headersTimeout: 0, bodyTimeout: 0 }, this);
  }

  /** Aborts the upstream request (idempotent) and closes its socket. */
  cancel(reason: Error): void {
    if (this.cancelReason) return;
    this.cancelReason = reason;
    this.release();
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
  }

  get elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.cancelReason) controller.abort(this.cancelReason);
  }

  onResponseStart(controller: Controller, statusCode: number, headers: IncomingHttpHeaders): void {
    if (!this.live) return;
    if (statusCode < 200 || statusCode >= 300) {
      this.errorStatus = statusCode;
      this.errorHeaders = headers;
      return;
    }
    this.onSuccessHeaders(controller, statusCode, headers);
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (!this.live) return;
    if (this.errorStatus !== 0) {
      this.errorChunks.push(chunk);
      this.errorBytes += chunk.length;
      // An error body that goes on and on: judge it by its start, no need to wait for the end.
      if (this.errorBytes >= MAX_ERROR_BODY) this.failWithStatus();
      return;
    }
    this.answerBytes += chunk.length;
    if (this.answerBytes > MAX_ANSWER_BYTES) return this.onBroken(answerTooLarge());
    this.onBody(controller, chunk);
  }

  /** A non-2xx answer: its status and (the start of) its body decide what the attempt's failure means. */
  private failWithStatus(): void {
    const body = Buffer.concat(this.errorChunks).subarray(0, MAX_ERROR_BODY);
    const verdict = this.input.call.wire.classifyStatus(this.errorStatus, body.toString('utf8'), this.errorHeaders);
    this.fail(statusError(verdict, { status: this.errorStatus, headers: this.errorHeaders, body }));
  }

  onResponseEnd(): void {
    if (!this.live) return;
    if (this.errorStatus !== 0) {
      this.failWithStatus();
      return;
    }
    this.onEnd();
  }

  onResponseError(_controller: Controller | null, err: Error): void {
    if (this.cancelReason || !this.live) return;
    // The stale-aware pool marked it: a reused socket the server had closed, before any answer.
    if (this.fresh === null && isStaleSocketFailure(err)) return this.retryOnFreshConnection();
    this.onBroken(transportError(err, this.errorStatus !== 0 ? 'headers' : this.currentPhase()));
  }

  /**
   * A pooled socket the server had already closed (llama-server advertises keep-alive, then
   * closes after every stream): the server never saw the request. It goes again, once, at
   * once, on a connection of its own; that is not an attempt, nor a failure, nor a retry.
   */
  private retryOnFreshConnection(): void {
    const { tier } = this.input;
    this.controller = null;
    this.fresh = createFreshConnection(tier.provider, tier.timeouts.connect_ms);
    this.dispatchOn(this.fresh);
  }

  private readonly onClientAbort = (): void => {
    const shutdown = isShutdown(this.input.client.reason);
    this.cancel(new Error(shutdown ? 'llm-route is shutting down' : 'client disconnected'));
    this.onClientGone(shutdown ? abortError('shutdown', 'llm-route is shutting down', this.currentPhase()) : abortError('client_abort', 'client disconnected', this.currentPhase()));
  };

  protected abstract onSuccessHeaders(controller: Controller, status: number, headers: IncomingHttpHeaders): void;
  protected abstract onBody(controller: Controller, chunk: Buffer): void;
  protected abstract onEnd(): void;
  /** The socket broke (reset, closed early) while the attempt was live. */
  protected abstract onBroken(err: AttemptError): void;
  /** The attempt failed before it produced an answer; settles it. */
  protected abstract fail(err: AttemptError): void;
  /** The client left, or the server is stopping (`err.reason` says which). */
  protected abstract onClientGone(err: AttemptError): void;
  protected abstract currentPhase(): AttemptError['phase'];
}

function abortError(reason: 'client_abort' | 'shutdown', message: string, phase: AttemptError['phase']): AttemptError {
  return new AttemptError(reason, message, { phase, failover: false, retryable: false, blame: null });
}
