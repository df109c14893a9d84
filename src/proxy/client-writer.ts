import type { StreamSink } from './stream-sink.js';

/** The upstream side of the relay, as far as backpressure needs it. */
export interface Upstream {
  pause(): void;
  resume(): void;
}

/**
 * Writes a committed stream to the client. Everything handed over in one turn (undici often
 * delivers many HTTP chunks from one socket read) leaves as one write: writing each event on
 * its own costs a write call per event while node:http holds them corked until the next tick.
 * The one exception is the commit's first content (`writeNow`), which is what the client waits
 * for. A client that does not keep up pauses the upstream until it drains.
 */
export class ClientWriter {
  private unsent: Buffer[] = [];
  private pausedUpstream = false;

  constructor(
    private readonly sink: StreamSink,
    private readonly upstream: Upstream,
    /** Once the client is gone nothing is written. */
    private readonly client: { readonly aborted: boolean },
  ) {}

  /** The upstream is paused because the client is not reading. */
  get paused(): boolean {
    return this.pausedUpstream;
  }

  write(bytes: Buffer): void {
    if (this.unsent.length === 0) queueMicrotask(this.flush);
    this.unsent.push(bytes);
  }

  /** Writes `bytes` (after anything still queued) and puts them on the wire at once: a stream's first content. */
  writeNow(bytes: Buffer): void {
    this.unsent.push(bytes);
    this.send(true);
    if (!this.client.aborted) this.sink.sendNow?.();
  }

  /** Ends the client's response after what is still queued; `tail` is written last. */
  end(tail: Buffer | null): void {
    this.send(false);
    this.sink.end(tail);
  }

  /** Writes what is still queued and leaves the response open: a mid-stream resume goes on writing to it. */
  release(): void {
    this.send(false);
  }

  private readonly flush = (): void => {
    this.send(true);
  };

  private send(mayPause: boolean): void {
    const unsent = this.unsent;
    this.unsent = [];
    if (unsent.length === 0 || this.client.aborted) return;
    const drained = this.sink.write(unsent.length === 1 ? unsent[0] : Buffer.concat(unsent));
    if (!drained && mayPause && !this.pausedUpstream) {
      this.pausedUpstream = true;
      this.upstream.pause();
      this.sink.onceDrain(this.onDrain);
    }
  }

  private readonly onDrain = (): void => {
    this.pausedUpstream = false;
    this.upstream.resume();
  };
}
