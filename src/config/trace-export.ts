import type { Env } from './env.js';
import type { Config } from './loaded-config.js';

/**
 * Where and how llm-route's spans go (README "Traces"), from the tier file's `telemetry.otlp`,
 * else from the standard OpenTelemetry variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the whole
 * URL) or OTEL_EXPORTER_OTLP_ENDPOINT (a base: `/v1/traces` is added), OTEL_EXPORTER_OTLP_HEADERS
 * and OTEL_EXPORTER_OTLP_TRACES_HEADERS, OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, OTEL_SERVICE_NAME,
 * OTEL_RESOURCE_ATTRIBUTES, the batch's OTEL_BSP_* and the export's OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT.
 * OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER without `otlp`, turns traces off. Read at start
 * and on each reload; small and dependency-free, as it runs when traces are off too.
 */
export interface TraceExport {
  /** The full URL spans are POSTed to (`…/v1/traces`). */
  url: string;
  /** Sent with each export; never logged. */
  headers: Record<string, string>;
  protocol: 'http/protobuf' | 'http/json';
  /** The `service.name` and other attributes of the resource the spans describe. */
  resource: Record<string, string>;
  batch: { delayMs: number; maxQueue: number; maxBatch: number; timeoutMs: number };
  /** Which said so: the tier file or the environment. */
  source: 'file' | 'env';
}

/** Traces are configured but cannot be exported as asked: why (they stay off), and where they were to go. */
export interface TraceExportProblem {
  problem: string;
  endpoint: string;
}

const TRUE = /^true$/i;

/** The export the config and environment ask for: null when traces are off. */
export function traceExport(config: Config, env: Env = process.env): TraceExport | TraceExportProblem | null {
  if (TRUE.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) return null;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim());
  if (exporters?.some(Boolean) && !exporters.includes('otlp')) return null;
  const file = config.telemetry.otlp;
  const protocol = file?.protocol ?? env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ?? env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() ?? 'http/protobuf';
  const endpoint = file?.endpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (protocol !== 'http/protobuf' && protocol !== 'http/json' && endpoint) {
    const problem = `OTLP protocol "${protocol}" is not supported: llm-route exports over OTLP/HTTP only (http/protobuf, the default, or http/json); traces are off`;
    return { problem, endpoint: shownEndpoint(endpoint) };
  }
  const common = { protocol: protocol as TraceExport['protocol'], resource: resourceOf(env), batch: batchOf(env) };
  if (file) return { ...common, url: withPath(file.endpoint), headers: { ...file.headers }, source: 'file' };
  const whole = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!whole && !base) return null;
  const url = whole || withPath(base as string);
  if (!isHttpUrl(url)) {
    const name = whole ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
    return { problem: `${name} is not an http:// or https:// URL; traces are off`, endpoint: shownEndpoint(url) };
  }
  const headers = { ...headerList(env.OTEL_EXPORTER_OTLP_HEADERS), ...headerList(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) };
  return { ...common, url, headers, source: 'env' };
}

/** The URL as it may be shown: no credentials, no query (either may hold a key). */
export function shownEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** Whether two exports go to the same place the same way (a reload that changes neither keeps the exporter). */
export function sameExport(a: TraceExport, b: TraceExport): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function withPath(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function isHttpUrl(text: string): boolean {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** `key1=value1,key2=value2` with percent-encoded values (the W3C Baggage format the OTel variables use); malformed entries are skipped. */
function headerList(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const entry of text?.split(',') ?? []) {
    const at = entry.indexOf('=');
    if (at <= 0) continue;
    const name = entry.slice(0, at).trim();
    let value = entry.slice(at + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) && !/[\r\n]/.test(value)) headers[name] = value;
  }
  return headers;
}

function resourceOf(env: Env): Record<string, string> {
  const resource = headerList(env.OTEL_RESOURCE_ATTRIBUTES);
  resource['service.name'] = env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || 'llm-route';
  return resource;
}

function batchOf(env: Env): TraceExport['batch'] {
  const maxQueue = positive(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048);
  return {
    delayMs: positive(env.OTEL_BSP_SCHEDULE_DELAY, 5000),
    maxQueue,
    maxBatch: Math.min(maxQueue, positive(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512)),
    timeoutMs: positive(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000),
  };
}

function positive(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return text !== undefined && text.trim() !== '' && Number.isInteger(value) && value > 0 ? value : fallback;
}
