import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Agent, Client, Dispatcher, Pool } from 'undici';
import * as undici from './undici.js';
import { isStaleSocketFailure, noteSocketFailure } from './stale-socket.js';

/**
 * undici pools that can tell a stale keep-alive socket from a real failure (see
 * stale-socket.ts): each connection counts the requests it carried since it connected, and
 * an error on a reused one before any answer is marked, so `isStaleSocketFailure(err)` knows.
 * Drop-in for `new Pool(origin, options)` and `new Agent(options)`.
 */
export function createStaleAwarePool(origin: string | URL, options: Pool.Options = {}): Pool {
  return new undici.Pool(origin, { ...options, factory: (url, opts) => new CountingClient(url, opts as Client.Options) });
}

export function createStaleAwareAgent(options: Agent.Options = {}): Agent {
  return new undici.Agent({ ...options, factory: (origin, opts) => createStaleAwarePool(origin, opts as Pool.Options) });
}

/** Where a request goes again after a stale pooled socket: a connection of its own, for that one request. */
export type FreshConnection = (options: Dispatcher.DispatchOptions) => Dispatcher;

/**
 * The stale-socket retry as an undici interceptor (the shape `Dispatcher.compose` takes): a
 * request that fails on a stale pooled socket (a stale-aware pool or agent marks the error; see
 * stale-socket.ts) goes again once, at once, on a connection of its own (`fresh`), closed as
 * soon as that request is done, so it cannot meet another stale socket. The handler never hears
 * of the first failure: it is neither an attempt, nor a failure, nor a retry. `onStale` hears of
 * each such retry.
 */
export function retryStaleSocket(fresh: FreshConnection, onStale?: (err: Error) => void): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new StaleSocketRetry(options, undici.asCurrentHandler(handler), fresh, onStale));
}

/**
 * `dispatcher` with the stale-socket retry around each request, as `dispatcher.compose(retryStaleSocket(…))`
 * would make it, without compose's Proxy (calling close() through it breaks EnvHttpProxyAgent,
 * whose fields are private). The one wrapper every stale-aware caller sends through: a
 * provider's pool (providers/upstream-dispatcher.ts) and sendRetryingStale.
 */
export function withStaleRetry(dispatcher: Dispatcher, fresh: FreshConnection, onStale?: (err: Error) => void): Dispatcher {
  return new StaleRetrying(dispatcher, retryStaleSocket(fresh, onStale));
}

/**
 * Sends with `send(dispatcher)` through the stale-socket retry: a stale socket's request goes
 * again on a connection of its own to `origin`. `onStale` hears of each such retry.
 */
export async function sendRetryingStale<T>(
  dispatcher: Dispatcher,
  origin: string | URL,
  send: (dispatcher: Dispatcher) => Promise<T>,
  opts: { connectTimeout?: number; onStale?: (err: unknown) => void } = {},
): Promise<T> {
  return send(withStaleRetry(dispatcher, () => new undici.Client(origin, { connectTimeout: opts.connectTimeout, pipelining: 1 }), opts.onStale));
}

/** A dispatcher whose requests go through an interceptor; closing and destroying are its inner dispatcher's. */
class StaleRetrying extends undici.Dispatcher {
  private readonly send: Dispatcher.Dispatch;

  constructor(
    private readonly inner: Dispatcher,
    interceptor: Dispatcher.DispatcherComposeInterceptor,
  ) {
    super();
    this.send = interceptor(inner.dispatch.bind(inner));
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    return this.send(options, handler);
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    return callback ? this.inner.close(callback) : this.inner.close();
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(err?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    if (typeof err === 'function') return this.inner.destroy(err);
    if (callback) return this.inner.destroy(err ?? null, callback);
    return this.inner.destroy(err ?? null);
  }
}

/** Passes every callback on; a stale socket's failure sends the request again on a fresh connection instead. */
class StaleSocketRetry implements Dispatcher.DispatchHandler {
  private retried = false;

  constructor(
    private readonly options: Dispatcher.DispatchOptions,
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly fresh: FreshConnection,
    private readonly onStale: ((err: Error) => void) | undefined,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, statusMessage?: string): void {
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.inner.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    if (this.retried || !isStaleSocketFailure(err)) return this.inner.onResponseError?.(controller, err);
    this.retried = true;
    this.onStale?.(err);
    // The server never saw the request: once more, straight to the handler (no third try), on a
    // connection that closes as soon as the request is done (close waits for it), cut short too.
    const connection = this.fresh(this.options);
    connection.dispatch(this.options, this.inner);
    void connection.close().catch(() => undefined);
  }
}

/** A pool connection that counts what its current socket carried. */
class CountingClient extends undici.Client {
  requestsOnSocket = 0;

  constructor(origin: string | URL, options: Client.Options) {
    super(origin, options);
    // Emitted for every new socket, before its first request is written.
    this.on('connect', () => {
      this.requestsOnSocket = 0;
    });
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    // A pool hands its connections undici's classic handler shape; anything else passes untouched.
    if (typeof handler.onRequestStart === 'function') return super.dispatch(options, handler);
    return super.dispatch(options, new SocketProbe(this, handler));
  }
}

/** Passes every callback on; notes whether the socket was reused and whether an answer began. */
class SocketProbe implements Dispatcher.DispatchHandler {
  private reused = false;
  private responseStarted = false;

  constructor(
    private readonly client: CountingClient,
    private readonly inner: Dispatcher.DispatchHandler,
  ) {}

  onConnect(abort: (err?: Error) => void, context?: object): void {
    this.reused = this.client.requestsOnSocket++ > 0;
    (this.inner.onConnect as ((abort: (err?: Error) => void, context?: object) => void) | undefined)?.(abort, context);
  }

  onResponseStarted(): void {
    this.responseStarted = true;
    this.inner.onResponseStarted?.();
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    this.responseStarted = true;
    return this.inner.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: import('node:stream').Duplex): void {
    this.responseStarted = true;
    this.inner.onUpgrade?.(statusCode, headers, socket);
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData?.(chunk) ?? true;
  }

  onComplete(trailers: string[] | null): void {
    this.inner.onComplete?.(trailers);
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.inner.onBodySent?.(chunkSize, totalBytesSent);
  }

  onError(err: Error): void {
    noteSocketFailure(err, { reused: this.reused, responseStarted: this.responseStarted });
    if (!this.inner.onError) throw err;
    this.inner.onError(err);
  }
}
