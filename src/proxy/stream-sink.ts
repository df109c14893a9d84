import type { ServerResponse } from 'node:http';
import type { Tier } from '../config/schema.js';
import type { AnswerCapture } from './answer-capture.js';

/** Where a committed stream's bytes go (the client's response). */
export interface StreamSink {
  /** false when the client is not keeping up: the upstream is paused until `drain`. */
  write(data: Buffer): boolean;
  onceDrain(resume: () => void): void;
  /**
   * Puts what was written on the wire now. node:http holds a response's writes corked until the
   * end of the turn, and a burst of events (one socket read can hold a hundred) is read through
   * in that turn: the commit's first content must not wait for the rest of its chunk.
   */
  sendNow?(): void;
  /** Ends the response; `tail` is written last (a terminator or an error event). */
  end(tail: Buffer | null): void;
}

/**
 * The one step between a stream's first content event and the client, handed to the attempt
 * by whoever owns the client's response (the exchange; a resume, the response it goes on
 * writing to). Called once, synchronously, at commit: it answers the client (status, headers)
 * and returns where the rest of the stream goes. No byte reaches the client before it.
 */
export interface CommitPort {
  /** `attempts`: the tries it took, this one included. */
  commit(tier: Tier, attempts: number): StreamSink;
}

/** The client's response as a stream's sink; with a capture (an Idempotency-Key), every byte written is also kept. */
export class ResponseSink implements StreamSink {
  constructor(
    private readonly res: ServerResponse,
    private readonly capture: AnswerCapture | null,
  ) {}

  write(data: Buffer): boolean {
    this.capture?.add(data);
    return this.res.write(data);
  }

  onceDrain(resume: () => void): void {
    this.res.once('drain', resume);
  }

  sendNow(): void {
    // Undoes the cork of this turn's write (node:http's own uncork on the next tick is then a no-op).
    const socket = this.res.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
  }

  end(tail: Buffer | null): void {
    this.capture?.add(tail);
    if (tail) this.res.end(tail);
    else this.res.end();
  }
}
