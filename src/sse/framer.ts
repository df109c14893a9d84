/**
 * An incremental framer: upstream bytes in, one callback per complete event out, each with
 * its original bytes (`raw`, relayed unchanged) and its decoded payload (`data`; null for a
 * comment or keep-alive that carries none). SSE and NDJSON streams both come through one.
 */
export type FrameHandler = (raw: Buffer, data: string | null) => void;

export interface Framer {
  /**
   * Frames `chunk`, calling `onEvent` per complete event, in order. True when the chunk was
   * consumed exactly at event boundaries with nothing carried over before or after it, so a
   * caller that keeps every event may forward `chunk` itself.
   */
  push(chunk: Buffer, onEvent: FrameHandler): boolean;
  /** At the end of the stream: emits a last unterminated event, if any; reports whether anything was left. */
  flush(onEvent: FrameHandler): boolean;
  /** Bytes held back waiting for the end of an event. */
  readonly pendingBytes: number;
}
