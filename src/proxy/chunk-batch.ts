import { RAW } from '../protocols/core/stream-output.js';

/**
 * What one framed chunk of a committed stream sends to the client, gathered event by event. Fast
 * path: a chunk whose events all went out as they came is forwarded as the same Buffer.
 */
export class ChunkBatch {
  private out: Buffer[] = [];
  /** Something of this chunk does not go out as it came (dropped, or rendered). */
  private altered = false;

  get empty(): boolean {
    return this.out.length === 0;
  }

  /** A new chunk is being framed. */
  begin(): void {
    this.altered = false;
  }

  /** Queues what the client gets for one event: RAW (or `raw` itself) is the event as it came, null nothing. */
  keep(piece: typeof RAW | Buffer | null, raw: Buffer): void {
    if (piece === RAW || piece === raw) this.out.push(raw);
    else {
      this.altered = true;
      if (piece) this.out.push(piece);
    }
  }

  /** The bytes queued so far, and the batch emptied; `whole`, the chunk itself, when it is whole events all unchanged. */
  take(whole: Buffer | null = null): Buffer {
    const out = this.out;
    this.out = [];
    if (whole !== null && !this.altered) return whole;
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }
}
