import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

/**
 * A local OTLP/HTTP trace receiver (the collector's `/v1/traces`), decoding what it is sent
 * with OpenTelemetry's own definitions: protobuf bodies with the ExportTraceServiceRequest
 * that @opentelemetry/otlp-transformer 0.216.0 ships as a protobufjs module (installed as the
 * devDependency `otlp-transformer-protobufjs`: later versions ship only their serializers),
 * JSON bodies as OTLP/JSON is (JSON.parse; ids in hex, times as strings). Both become the same
 * `ReceivedSpan`s. It answers 200 with an empty ExportTraceServiceResponse, or what `answer` says.
 */

const require = createRequire(import.meta.url);
const root = require('otlp-transformer-protobufjs/build/src/generated/root.js') as ProtoRoot;
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

interface ProtoRoot {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
}
interface ProtoType {
  decode(body: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): OtlpRequest;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: KeyValue[];
  events?: Array<{ name: string; timeUnixNano: string | number; attributes?: KeyValue[] }>;
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ scope?: { name?: string; version?: string }; spans?: OtlpSpan[] }> }>;
}

export type AttributeValue = string | number | boolean | AttributeValue[];

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** OTLP's SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  /** Epoch nanoseconds. */
  start: bigint;
  end: bigint;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; time: bigint; attributes: Record<string, AttributeValue> }>;
  /** 0 UNSET, 1 OK, 2 ERROR. */
  status: number;
  resource: Record<string, AttributeValue>;
  scope: string;
}

export interface ReceivedExport {
  contentType: string;
  headers: IncomingHttpHeaders;
  path: string;
  spans: ReceivedSpan[];
}

export const SERVER = 2;
export const CLIENT = 3;

export class OtlpReceiver {
  readonly exports: ReceivedExport[] = [];
  /** Bodies that did not decode (a test expects none). */
  readonly errors: Error[] = [];
  /** The status (and body) of the next answers, and how long each waits; 200 with an empty response at once by default. */
  answer: { status: number; body?: Uint8Array | string; delayMs?: number } = { status: 200 };

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(port = 0): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver?.receive(req.url ?? '', req.headers, Buffer.concat(chunks), res));
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** Every span received so far, in arrival order. */
  get spans(): ReceivedSpan[] {
    return this.exports.flatMap((e) => e.spans);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private receive(path: string, headers: IncomingHttpHeaders, body: Buffer, res: import('node:http').ServerResponse): void {
    const contentType = String(headers['content-type'] ?? '');
    const json = contentType.startsWith('application/json');
    try {
      const request = json
        ? (JSON.parse(body.toString('utf8')) as OtlpRequest)
        : ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, enums: Number, bytes: String, defaults: false });
      this.exports.push({ contentType, headers, path, spans: spansOf(request, !json) });
    } catch (err) {
      this.errors.push(err as Error);
      res.writeHead(400).end();
      return;
    }
    const { status, body: answer, delayMs = 0 } = this.answer;
    setTimeout(() => {
      res.writeHead(status, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(answer ?? (json ? '{}' : Buffer.alloc(0)));
    }, delayMs);
  }
}

/** OTLP's spans as plain values: ids in hex (protobuf's bytes come base64 from toObject), times as bigint nanoseconds. */
function spansOf(request: OtlpRequest, base64Ids: boolean): ReceivedSpan[] {
  const id = (value: string | undefined): string => (value ? (base64Ids ? Buffer.from(value, 'base64').toString('hex') : value) : '');
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: id(span.traceId),
          spanId: id(span.spanId),
          parentSpanId: id(span.parentSpanId),
          traceState: span.traceState ?? '',
          name: span.name,
          kind: span.kind,
          start: BigInt(span.startTimeUnixNano),
          end: BigInt(span.endTimeUnixNano),
          attributes: attributesOf(span.attributes),
          events: (span.events ?? []).map((e) => ({ name: e.name, time: BigInt(e.timeUnixNano), attributes: attributesOf(e.attributes) })),
          status: span.status?.code ?? 0,
          resource,
          scope: scopeSpans.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

function plainValue(value: AnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  throw new Error(`an attribute value of no known type: ${JSON.stringify(value)}`);
}
