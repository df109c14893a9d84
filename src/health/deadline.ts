import type { Dispatcher } from 'undici';

/** What every request of one check runs under: the check's deadline, and the caller's dispatcher. */
export interface Http {
  signal: AbortSignal;
  dispatcher: Dispatcher | undefined;
}

/** One AbortController for the whole check: the timer or the caller's signal aborts whatever request is in flight. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  timedOut = false;

  constructor(
    readonly timeoutMs: number,
    private readonly outer: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    if (outer?.aborted) this.cancel();
    else outer?.addEventListener('abort', this.cancel, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return !this.timedOut && this.controller.signal.aborted;
  }

  private readonly cancel = (): void => {
    this.controller.abort(new Error('cancelled'));
  };

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.cancel);
    // Anything still open (a body nobody read to the end) is abandoned with the check.
    if (!this.controller.signal.aborted) this.controller.abort(new Error('check finished'));
  }
}
