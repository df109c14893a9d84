#!/usr/bin/env node
// A local OTLP/HTTP trace receiver for trying traces without a tracing backend: it takes
// OTLP/JSON (set `protocol: http/json` in the tier file's telemetry.otlp), appends each span as
// one JSON line to spans.jsonl, and prints a line per span. Draw them with waterfall.mjs.
//   node examples/traces/collector.mjs [port=4318] [file=spans.jsonl]
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 4318);
const file = process.argv[3] ?? 'spans.jsonl';

/** An OTLP/JSON AnyValue as a plain value. */
function plain(value) {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plain);
  return null;
}
const attributes = (list = []) => Object.fromEntries(list.map(({ key, value }) => [key, plain(value)]));

createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/v1/traces')) return res.writeHead(404).end();
    if (!String(req.headers['content-type']).startsWith('application/json')) {
      return res.writeHead(415, { 'content-type': 'text/plain' }).end('this collector takes OTLP/JSON: set protocol: http/json\n');
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const resourceSpans of body.resourceSpans ?? []) {
      const service = attributes(resourceSpans.resource?.attributes)['service.name'];
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          const line = {
            service,
            name: span.name,
            kind: span.kind,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || '',
            start: String(span.startTimeUnixNano),
            end: String(span.endTimeUnixNano),
            status: span.status?.code ?? 0,
            attributes: attributes(span.attributes),
            events: (span.events ?? []).map((e) => ({ name: e.name, time: String(e.timeUnixNano) })),
          };
          appendFileSync(file, `${JSON.stringify(line)}\n`);
          console.log(`${service}  ${span.name}  trace ${span.traceId.slice(0, 8)}…  ${Number(BigInt(line.end) - BigInt(line.start)) / 1e6} ms`);
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
}).listen(port, '127.0.0.1', () => console.log(`OTLP/JSON traces on http://127.0.0.1:${port}/v1/traces, spans to ${file}`));
