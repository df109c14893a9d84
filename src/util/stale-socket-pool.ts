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

/**
 * Sends with `send(dispatcher)`; when that fails on a stale socket, sends once more, at once,
 * on a connection of its own (closed when that request is done), so it cannot meet another
 * stale socket. `onStale` hears of each such retry (not an attempt, not a failure).
 */
export async function sendRetryingStale<T>(
  dispatcher: Dispatcher,
  origin: string | URL,
  send: (dispatcher: Dispatcher) => Promise<T>,
  opts: { connectTimeout?: number; onStale?: (err: unknown) => void } = {},
): Promise<T> {
  try {
    return await send(dispatcher);
  } catch (err) {
    if (!isStaleSocketFailure(err)) throw err;
    opts.onStale?.(err);
    const fresh = new undici.Client(origin, { connectTimeout: opts.connectTimeout, pipelining: 1 });
    try {
      return await send(fresh);
    } finally {
      // Resolves once the request (its body too) is done: the socket goes with it.
      void fresh.close().catch(() => undefined);
    }
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
