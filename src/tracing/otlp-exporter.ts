import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Dispatcher } from 'undici';
import { shownEndpoint, type TraceExport } from '../config/trace-export.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { networkFailure } from '../util/network-error.js';
import { Client, request } from '../util/undici.js';
import type { SpanSink } from './request-spans.js';
import { type Batch, SpanQueue } from './span-queue.js';
import type { TraceCounters } from './trace-metrics.js';

/**
 * Spans out over OTLP/HTTP, off the request path: a bounded queue (span-queue.ts: the oldest
 * dropped when it is full), sent in batches of at most `maxBatch` every `delayMs` (at once when a
 * batch is full), one export at a time, encoded by OpenTelemetry's own serializers (protobuf, or
 * JSON for `http/json`). A collector that cannot be reached or refuses a batch loses that batch
 * (no retries: a slow collector must not make spans pile up): counted, and said once on the
 * bus until an export succeeds again.
 */
export class OtlpExporter implements SpanSink {
  private queue: SpanQueue;
  private timer: NodeJS.Timeout | null = null;
  private sending: Promise<void> | null = null;
  private client: Dispatcher;
  /** Spans dropped since the collector stopped taking them; null while it takes them. */
  private failing: number | null = null;
  private closed = false;

  constructor(
    private target: TraceExport,
    private readonly bus: TelemetryBus,
    private readonly counters: TraceCounters,
  ) {
    this.queue = queueFor(target, (spans) => this.dropped('queue_full', spans));
    this.client = clientFor(target);
  }

  add(span: ReadableSpan): void {
    if (this.closed) return;
    this.queue.push(span);
    this.sendSoon(this.queue.length >= this.target.batch.maxBatch ? 0 : this.target.batch.delayMs);
  }

  /** Where spans go from now on (a reload: the endpoint, headers or protocol changed); the spans queued go there too. */
  retarget(target: TraceExport): void {
    const previous = this.client;
    const protocolChanged = target.protocol !== this.target.protocol;
    this.target = { ...target, batch: this.target.batch }; // the batch's settings come from the environment: they do not change
    this.client = clientFor(target);
    this.failing = null;
    void previous.close().catch(() => undefined);
    if (!protocolChanged) return;
    // Spans queued were encoded for the other protocol: dropped (counted), not sent in the wrong form.
    const left = this.queue.clear();
    if (left > 0) this.dropped('shutdown', left);
    this.queue = queueFor(this.target, (spans) => this.dropped('queue_full', spans));
  }

  /** Sends what is queued, within `ms`, then stops; what is left then is dropped (counted). */
  async close(ms: number): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const drained = (async () => {
      while (this.queue.length > 0 || this.sending) await (this.sending ?? this.send());
    })();
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
    const left = this.queue.clear();
    if (left > 0) this.dropped('shutdown', left);
    await this.client.destroy().catch(() => undefined);
  }

  private sendSoon(delayMs: number): void {
    if (this.sending || (this.timer && delayMs > 0)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.send();
    }, delayMs);
    this.timer.unref();
  }

  private send(): Promise<void> {
    if (this.sending) return this.sending;
    const batch = this.queue.take(this.target.batch.maxBatch);
    if (!batch) return Promise.resolve();
    this.sending = this.export(batch).finally(() => {
      this.sending = null;
      if (this.closed || this.queue.length === 0) return;
      this.sendSoon(this.queue.length >= this.target.batch.maxBatch ? 0 : this.target.batch.delayMs);
    });
    return this.sending;
  }

  private async export(batch: Batch): Promise<void> {
    const { url, headers, protocol, batch: limits } = this.target;
    const json = protocol === 'http/json';
    try {
      const body = 'bytes' in batch ? batch.bytes : JsonTraceSerializer.serializeRequest(batch.spans);
      if (!body) throw new Error('the spans could not be encoded');
      const res = await request(new URL(url), {
        dispatcher: this.client,
        method: 'POST',
        headers: { ...headers, 'content-type': json ? 'application/json' : 'application/x-protobuf' },
        body,
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      });
      const answer = new Uint8Array(await res.body.arrayBuffer());
      if (res.statusCode < 200 || res.statusCode > 299) return this.failed(batch.count, `the collector answered HTTP ${res.statusCode}`);
      // A partial success names the spans the collector refused.
      const serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
      const rejected = Math.min(batch.count, Number(serializer.deserializeResponse(answer).partialSuccess?.rejectedSpans ?? 0));
      if (rejected > 0) this.dropped('rejected', rejected);
      this.counters.exported.inc(batch.count - rejected);
      if (this.failing !== null) {
        this.bus.emit({ type: 'trace_export_recovered', endpoint: shownEndpoint(url), dropped: this.failing });
        this.failing = null;
      }
    } catch (err) {
      this.failed(batch.count, failureText(err));
    }
  }

  private failed(spans: number, error: string): void {
    if (this.failing === null) {
      this.failing = 0;
      this.bus.emit({ type: 'trace_export_failing', endpoint: shownEndpoint(this.target.url), error });
    }
    this.dropped('export_failed', spans);
  }

  private dropped(reason: 'queue_full' | 'export_failed' | 'rejected' | 'shutdown', spans: number): void {
    this.counters.dropped.labels(reason).inc(spans);
    if (this.failing !== null) this.failing += spans;
  }
}

/** Spans encoded in runs of up to 64 as they come (protobuf), or kept as objects until a batch is encoded (JSON). */
function queueFor(target: TraceExport, onDrop: (spans: number) => void): SpanQueue {
  const { maxQueue, maxBatch } = target.batch;
  const encode = target.protocol === 'http/json' ? null : (spans: ReadableSpan[]) => ProtobufTraceSerializer.serializeRequest(spans) as Uint8Array;
  return new SpanQueue(maxQueue, Math.min(64, maxBatch), encode, onDrop);
}

/** One connection to the collector (exports go one at a time), its own: never the providers' pools. */
function clientFor(target: TraceExport): Dispatcher {
  return new Client(new URL(target.url).origin, { connect: { timeout: target.batch.timeoutMs }, keepAliveTimeout: 30_000 });
}

/** A failed export in a few words: the network's ("connection refused"), else the error's own message. */
function failureText(err: unknown): string {
  const failure = networkFailure(err);
  if (failure.says) return `${failure.says} (${failure.code})`;
  return err instanceof Error ? err.message : String(err);
}
