import type { Socket } from 'node:net';

/**
 * Node's own request timeout (headers and body within `request_timeout_ms`) reports an expired
 * request on its socket, not on the request. A body reader waiting on that socket listens
 * here, so the request is answered in its endpoint's protocol instead of with bare bytes.
 */
const readers = new WeakMap<Socket, () => void>();

/** Calls `onExpired` if the request on `socket` runs out of time; returns the unsubscribe. */
export function whenRequestExpires(socket: Socket, onExpired: () => void): () => void {
  readers.set(socket, onExpired);
  return () => {
    if (readers.get(socket) === onExpired) readers.delete(socket);
  };
}

/** Tells the body reader on `socket` that its time is up; false when none was waiting. */
export function expireRequest(socket: Socket): boolean {
  const onExpired = readers.get(socket);
  if (!onExpired) return false;
  readers.delete(socket);
  onExpired();
  return true;
}
