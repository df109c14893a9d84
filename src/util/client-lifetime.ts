/**
 * The life of one client request: it ends when the client goes away, or with a ShutdownError
 * when the server stops. An AbortController without EventTarget, whose cost showed up in
 * profiles of the request path.
 */
export class ClientLifetime {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> = [];

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  onAbort(listener: () => void): void {
    this.listeners.push(listener);
  }

  offAbort(listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }
}
