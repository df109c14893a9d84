import { describe, expect, it } from 'vitest';
import { ConfigError, formatProblem } from '../../../src/config/errors.js';
import { loadConfigText } from '../../../src/config/load.js';
import { shownEndpoint, traceExport } from '../../../src/config/trace-export.js';

const BASE = `version: 1
providers:
  local:
    type: openai
    base_url: http://127.0.0.1:8080/v1
routes:
  chat:
    tiers:
      - { provider: local, model: m }
`;

const config = (extra = '', env: Record<string, string> = {}) => loadConfigText(`${BASE}${extra}`, '/tmp/x/llm-route.yaml', env);

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    config(text, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatProblem);
    throw error;
  }
  throw new Error('expected the config to be rejected');
}

describe('telemetry: in the tier file', () => {
  it('is off without it and without the OTEL_* variables', () => {
    expect(traceExport(config(), {})).toBeNull();
  });

  it('endpoint (a base: /v1/traces is added), headers with ${VAR}, protocol', () => {
    const loaded = config('telemetry:\n  otlp:\n    endpoint: http://collector:4318/\n    headers: { x-api-key: "${OTLP_KEY}" }\n    protocol: http/json\n', {
      OTLP_KEY: 'k-123456',
    });
    expect(traceExport(loaded, {})).toMatchObject({
      url: 'http://collector:4318/v1/traces',
      headers: { 'x-api-key': 'k-123456' },
      protocol: 'http/json',
      source: 'file',
      resource: { 'service.name': 'llm-route' },
      batch: { delayMs: 5000, maxQueue: 2048, maxBatch: 512, timeoutMs: 10_000 },
    });
  });

  it('rejects what is not an OTLP/HTTP setting, at its line, without quoting a header value', () => {
    const found = problems(
      'telemetry:\n  otlp:\n    endpoint: collector:4318\n    headers: { "bad header": "${OTLP_KEY}" }\n    protocol: grpc\n  traces: true\n',
      { OTLP_KEY: 'secret-value-99' },
    );
    const text = found.join('\n');
    expect(text).toMatch(/llm-route\.yaml:12:\d+: expected an http:\/\/ or https:\/\/ URL.*telemetry\.otlp\.endpoint/);
    expect(text).toMatch(/llm-route\.yaml:13:\d+: expected HTTP header names, and "bad header" is not one, got a map \(at telemetry\.otlp\.headers\)/);
    expect(text).toMatch(/llm-route\.yaml:14:\d+: expected one of "http\/protobuf", "http\/json", got "grpc"/);
    expect(text).toMatch(/unknown key "traces" in telemetry/);
    expect(text).not.toContain('secret-value-99');
  });
});

describe('telemetry: the standard OpenTelemetry variables', () => {
  it('OTEL_EXPORTER_OTLP_ENDPOINT is a base; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is and wins', () => {
    expect(traceExport(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example:4318' })).toMatchObject({
      url: 'https://otel.example:4318/v1/traces',
      protocol: 'http/protobuf',
      source: 'env',
    });
    expect(traceExport(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/custom/path' })).toMatchObject(
      { url: 'https://b/custom/path' },
    );
  });

  it('headers as key=value pairs, percent-decoded, the traces ones over the general ones; malformed pairs skipped', () => {
    const target = traceExport(config(), {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team=one,broken, =x',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=two',
    });
    expect(target).toMatchObject({ headers: { authorization: 'Bearer abc', 'x-team': 'two' } });
    expect(Object.keys((target as { headers: object }).headers)).toHaveLength(2);
  });

  it('the protocol (traces over general), service name, resource attributes and the batch settings', () => {
    const target = traceExport(config(), {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'router-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=ignored',
      OTEL_BSP_SCHEDULE_DELAY: '250',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '500',
      OTEL_EXPORTER_OTLP_TIMEOUT: 'soon',
    });
    expect(target).toMatchObject({
      protocol: 'http/json',
      resource: { 'service.name': 'router-eu', 'deployment.environment': 'prod' },
      batch: { delayMs: 250, maxQueue: 100, maxBatch: 100, timeoutMs: 10_000 },
    });
  });

  it('the tier file wins over the variables', () => {
    const loaded = config('telemetry: { otlp: { endpoint: "http://file:4318" } }\n');
    expect(traceExport(loaded, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://env:4318', OTEL_EXPORTER_OTLP_HEADERS: 'a=b' })).toMatchObject({
      url: 'http://file:4318/v1/traces',
      headers: {},
      source: 'file',
    });
  });

  it('OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER without otlp, turns traces off (the tier file too)', () => {
    const loaded = config('telemetry: { otlp: { endpoint: "http://file:4318" } }\n');
    expect(traceExport(loaded, { OTEL_SDK_DISABLED: 'TRUE' })).toBeNull();
    expect(traceExport(loaded, { OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(traceExport(loaded, { OTEL_TRACES_EXPORTER: 'console,otlp' })).toMatchObject({ source: 'file' });
    expect(traceExport(loaded, { OTEL_SDK_DISABLED: 'false' })).toMatchObject({ source: 'file' });
  });

  it('gRPC and endpoints that are not URLs are problems, said with where the spans were to go (no credentials)', () => {
    expect(traceExport(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://user:pw@c:4317?k=1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual({
      problem: expect.stringContaining('"grpc" is not supported'),
      endpoint: 'http://c:4317/',
    });
    expect(traceExport(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'c:4318' })).toMatchObject({ problem: expect.stringContaining('OTEL_EXPORTER_OTLP_ENDPOINT') });
    expect(shownEndpoint('https://user:secret@host:1/v1/traces?token=x')).toBe('https://host:1/v1/traces');
  });
});
