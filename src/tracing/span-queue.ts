import type { ReadableSpan } from '@opentelemetry/sdk-trace';

/** A run of spans in arrival order: its span objects until it is encoded, then only its bytes. */
interface Chunk {
  spans: ReadableSpan[] | null;
  bytes: Uint8Array | null;
  count: number;
}

/** What the queue hands the exporter: encoded bytes (protobuf), or the span objects to encode (JSON). */
export type Batch = { bytes: Uint8Array; count: number } | { spans: ReadableSpan[]; count: number };

/**
 * The spans waiting for an export, at most `maxQueue` (the oldest dropped first, counted by
 * `onDrop`). With `encode` (protobuf), each run of `chunkSize` spans is encoded as soon as it is
 * complete, on the event loop's next turn, and its span objects let go: they die young instead of
 * being promoted while a batch fills, which cost more garbage collection than the encoding itself.
 * OTLP's ExportTraceServiceRequest is one repeated field, so encoded runs joined end to end are
 * one request holding all their spans (protobuf concatenation merges repeated fields). OTLP/JSON
 * cannot be joined that way: its spans stay objects until the batch is encoded whole.
 */
export class SpanQueue {
  private readonly chunks: Chunk[] = [];
  private count = 0;
  private encoding: NodeJS.Immediate | null = null;

  constructor(
    private readonly maxQueue: number,
    private readonly chunkSize: number,
    private readonly encode: ((spans: ReadableSpan[]) => Uint8Array) | null,
    private readonly onDrop: (spans: number) => void,
  ) {}

  get length(): number {
    return this.count;
  }

  push(span: ReadableSpan): void {
    let open = this.chunks.at(-1);
    if (!open?.spans || open.count >= this.chunkSize) this.chunks.push((open = { spans: [], bytes: null, count: 0 }));
    (open.spans as ReadableSpan[]).push(span);
    open.count++;
    this.count++;
    if (open.count === this.chunkSize && this.encode) this.encoding ??= setImmediate(this.encodeComplete);
    while (this.count > this.maxQueue) this.dropOldest();
  }

  /** The oldest spans, whole runs of them, up to `max` (at least one run): encoded when the queue encodes. */
  take(max: number): Batch | null {
    if (this.count === 0) return null;
    if (this.encode) this.encodeAll();
    const taken: Chunk[] = [];
    let count = 0;
    while (this.chunks.length > 0 && (taken.length === 0 || count + this.chunks[0].count <= max)) {
      const chunk = this.chunks.shift() as Chunk;
      taken.push(chunk);
      count += chunk.count;
    }
    this.count -= count;
    if (this.encode) return { bytes: joined(taken.map((chunk) => chunk.bytes as Uint8Array)), count };
    return { spans: taken.flatMap((chunk) => chunk.spans as ReadableSpan[]), count };
  }

  /** Empties the queue; how many spans it held. */
  clear(): number {
    const count = this.count;
    this.chunks.length = 0;
    this.count = 0;
    if (this.encoding) clearImmediate(this.encoding);
    this.encoding = null;
    return count;
  }

  /** A run not yet encoded gives up its oldest span; an encoded one is dropped whole. */
  private dropOldest(): void {
    const oldest = this.chunks[0];
    if (oldest.spans && oldest.count > 1) {
      oldest.spans.shift();
      oldest.count--;
      this.count--;
      this.onDrop(1);
      return;
    }
    this.chunks.shift();
    this.count -= oldest.count;
    this.onDrop(oldest.count);
  }

  private readonly encodeComplete = (): void => {
    this.encoding = null;
    for (const chunk of this.chunks) if (chunk.spans && chunk.count >= this.chunkSize) this.encodeChunk(chunk);
  };

  private encodeAll(): void {
    for (const chunk of this.chunks) if (chunk.spans) this.encodeChunk(chunk);
  }

  private encodeChunk(chunk: Chunk): void {
    try {
      chunk.bytes = (this.encode as (spans: ReadableSpan[]) => Uint8Array)(chunk.spans as ReadableSpan[]);
    } catch {
      // Spans the serializer cannot take are dropped (counted), never thrown out of a timer.
      chunk.bytes = new Uint8Array(0);
      this.count -= chunk.count;
      this.onDrop(chunk.count);
      chunk.count = 0;
    }
    chunk.spans = null;
  }
}

function joined(parts: Uint8Array[]): Uint8Array {
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}
