import type { ServerResponse } from 'node:http';
import type { Tier } from '../config/schema.js';
import type { AnswerCapture } from './answer-capture.js';

/** Where a committed stream's bytes go (the client's response). */
export interface StreamSink {
  /** false when the client is not keeping up: the upstream is paused until `drain`. */
  write(data: Buffer): boolean;
  onceDrain(resume: () => void): void;
  /** Ends the response; `tail` is written last (a terminator or an error event). */
  end(tail: Buffer | null): void;
}

/**
 * The one step between a stream's first content event and the client, handed to the attempt
 * by whoever owns the client's response (the exchange; a recovery, the response it goes on
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

  end(tail: Buffer | null): void {
    this.capture?.add(tail);
    if (tail) this.res.end(tail);
    else this.res.end();
  }
}
