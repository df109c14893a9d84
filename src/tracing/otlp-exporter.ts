import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Dispatcher } from 'undici';
import { shownEndpoint, type TraceExport } from '../config/trace-export.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import { networkFailure } from '../util/network-error.js';
import { Client, request } from '../util/undici.js';
import type { SpanSink } from './request-spans.js';
import type { TraceCounters } from './trace-metrics.js';

/**
 * Spans out over OTLP/HTTP, off the request path: a bounded queue (the oldest span is dropped
 * when it is full), sent in batches of at most `maxBatch` every `delayMs` (at once when a batch
 * is full), one export at a time, encoded by OpenTelemetry's own serializers (protobuf, or
 * JSON for `http/json`). A collector that cannot be reached or refuses a batch loses that batch
 * (no retries: a slow collector must not make spans pile up): counted, and said once on the
 * bus until an export succeeds again.
 */
export class OtlpExporter implements SpanSink {
  private readonly ring: (ReadableSpan | undefined)[];
  private head = 0;
  private size = 0;
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
    this.ring = new Array(target.batch.maxQueue);
    this.client = clientFor(target);
  }

  add(span: ReadableSpan): void {
    if (this.closed) return;
    const { maxQueue, maxBatch, delayMs } = this.target.batch;
    if (this.size === maxQueue) {
      this.head = (this.head + 1) % maxQueue;
      this.size--;
      this.dropped('queue_full', 1);
    }
    this.ring[(this.head + this.size) % maxQueue] = span;
    this.size++;
    if (this.size >= maxBatch) this.sendSoon(0);
    else this.sendSoon(delayMs);
  }

  /** Where spans go from now on (a reload: the endpoint, headers or protocol changed); the spans queued go there too. */
  retarget(target: TraceExport): void {
    const previous = this.client;
    this.target = { ...target, batch: this.target.batch }; // the batch's settings come from the environment: they do not change
    this.client = clientFor(target);
    this.failing = null;
    void previous.close().catch(() => undefined);
  }

  /** Sends what is queued, within `ms`, then stops; what is left then is dropped (counted). */
  async close(ms: number): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const drained = (async () => {
      while (this.size > 0 || this.sending) await (this.sending ?? this.send());
    })();
    await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, ms).unref())]);
    if (this.size > 0) this.dropped('shutdown', this.take(this.size).length);
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
    if (this.sending || this.size === 0) return this.sending ?? Promise.resolve();
    const spans = this.take(Math.min(this.size, this.target.batch.maxBatch));
    this.sending = this.export(spans).finally(() => {
      this.sending = null;
      if (this.closed || this.size === 0) return;
      this.sendSoon(this.size >= this.target.batch.maxBatch ? 0 : this.target.batch.delayMs);
    });
    return this.sending;
  }

  private async export(spans: ReadableSpan[]): Promise<void> {
    const { url, headers, protocol, batch } = this.target;
    const json = protocol === 'http/json';
    const serializer = json ? JsonTraceSerializer : ProtobufTraceSerializer;
    try {
      const body = serializer.serializeRequest(spans);
      if (!body) throw new Error('the spans could not be encoded');
      const res = await request(new URL(url), {
        dispatcher: this.client,
        method: 'POST',
        headers: { ...headers, 'content-type': json ? 'application/json' : 'application/x-protobuf' },
        body,
        headersTimeout: batch.timeoutMs,
        bodyTimeout: batch.timeoutMs,
      });
      const answer = new Uint8Array(await res.body.arrayBuffer());
      if (res.statusCode < 200 || res.statusCode > 299) return this.failed(spans.length, `the collector answered HTTP ${res.statusCode}`);
      // A partial success names the spans the collector refused.
      const rejected = Number(serializer.deserializeResponse(answer).partialSuccess?.rejectedSpans ?? 0);
      if (rejected > 0) this.dropped('rejected', Math.min(rejected, spans.length));
      this.counters.exported.inc(spans.length - Math.min(rejected, spans.length));
      if (this.failing !== null) {
        this.bus.emit({ type: 'trace_export_recovered', endpoint: shownEndpoint(url), dropped: this.failing });
        this.failing = null;
      }
    } catch (err) {
      this.failed(spans.length, failureText(err));
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

  private take(count: number): ReadableSpan[] {
    const spans: ReadableSpan[] = [];
    const capacity = this.ring.length;
    for (let i = 0; i < count; i++) {
      spans.push(this.ring[this.head] as ReadableSpan);
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % capacity;
    }
    this.size -= count;
    return spans;
  }
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
