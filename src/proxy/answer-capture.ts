import type { StoredAnswer } from '../state/types.js';

/** Answers larger than this are not stored: the record is abandoned and a duplicate runs again. */
export const MAX_STORED_ANSWER_BYTES = 16 * 1024 * 1024;

/** Headers every answer gets afresh (its own request id) or that the replay sets itself. */
const NOT_REPLAYED = new Set(['x-request-id', 'content-length']);

/**
 * The bytes one answer went out with, for an Idempotency-Key record: the status, the headers
 * worth replaying and the body (a stream's SSE bytes as written). Only an exchange with a key
 * has one, so answers without a key are not copied at all; chunks are kept by reference.
 */
export class AnswerCapture {
  private status = 0;
  private headers: string[] = [];
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private tooLarge = false;

  /** The status and a flat name/value header list, as written. */
  head(status: number, headers: readonly string[]): void {
    this.status = status;
    const kept: string[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (!NOT_REPLAYED.has(headers[i].toLowerCase())) kept.push(headers[i], headers[i + 1]);
    }
    this.headers = kept;
  }

  add(chunk: Buffer | null | undefined): void {
    if (!chunk || chunk.length === 0 || this.tooLarge) return;
    this.bytes += chunk.length;
    if (this.bytes > MAX_STORED_ANSWER_BYTES) {
      this.tooLarge = true;
      this.chunks.length = 0;
      return;
    }
    this.chunks.push(chunk);
  }

  /** What was captured; null when nothing went out or it was too large to keep. */
  answer(): StoredAnswer | null {
    if (this.status === 0 || this.tooLarge) return null;
    return { status: this.status, headers: this.headers, body: this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks) };
  }
}
