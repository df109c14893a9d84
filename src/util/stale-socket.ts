/**
 * A stale keep-alive socket: a pooled connection the server had already closed (or closes as
 * it sees the request) when it was reused, so the request fails at once with a reset or
 * `other side closed` and no byte of an answer. llama-server advertises `Keep-Alive:
 * timeout=5` yet closes the socket after every streamed answer, so this happens whenever a
 * request follows a stream closely. The server never saw the request: it is sent again once,
 * at once, on a new connection, and is neither an attempt nor a failure.
 *
 * A reset on a *new* connection, or after an answer began, is a real failure: it is not this.
 */

/** What the caller knows about the connection a failed request went out on. */
export interface ConnectionFacts {
  /** The connection had carried an earlier request (it came from a keep-alive pool). */
  reused: boolean;
  /** Some of this request's answer (its status line, at least) had arrived. */
  responseStarted: boolean;
}

/** Codes of a connection the other side closed or reset. */
const CLOSED_CODES: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

/** Errors that a stale-aware pool saw happen on a reused connection before any answer. */
const markedStale = new WeakSet<object>();

/**
 * Is `err` a stale pooled socket? With `facts`, decided from them; without, from the mark a
 * stale-aware pool (createStaleAwarePool / createStaleAwareAgent) puts on the error.
 */
export function isStaleSocketFailure(err: unknown, facts?: ConnectionFacts): boolean {
  if (facts === undefined) return typeof err === 'object' && err !== null && markedStale.has(err);
  return facts.reused && !facts.responseStarted && closedCode(err);
}

/** Marks `err` as a stale-socket failure when `facts` say it is one; the pool calls this. */
export function noteSocketFailure(err: Error, facts: ConnectionFacts): void {
  if (isStaleSocketFailure(err, facts)) markedStale.add(err);
}

function closedCode(err: unknown): boolean {
  let current: unknown = err;
  // undici may wrap the node:net error; its code sits a cause or two down.
  for (let depth = 0; depth < 3 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CLOSED_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
