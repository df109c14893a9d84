import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { OtlpReceiver, SERVER } from '../../helpers/otlp-receiver.js';
import { configYaml } from '../../helpers/proxy.js';

// `exec --trace` (docs/traces.md): the command gets Claude Code's variables for its traces
// beta, pointed at llm-route's collector, and its traceparent, which it sends to llm-route: the
// request's span is then the child of the command's. The child here is a stand-in that sends
// a traceparent as Claude Code does with those variables (the real one is in the README).

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
}, 60_000);
afterAll(() => cli?.remove());

const VARS = [
  'CLAUDE_CODE_ENABLE_TELEMETRY',
  'CLAUDE_CODE_ENHANCED_TELEMETRY_BETA',
  'CLAUDE_CODE_PROPAGATE_TRACEPARENT',
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_SERVICE_NAME',
];

/** Prints the variables, then asks the proxy over Anthropic Messages with a traceparent of its own. */
const CHILD = `
(async () => {
  const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.ANTHROPIC_AUTH_TOKEN, traceparent: '00-5b8efff798038103d269b633813fc60c-eee19b7ec3c1b174-01' },
    body: JSON.stringify({ model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  });
  console.log(JSON.stringify({ status: res.status, env: Object.fromEntries(${JSON.stringify(VARS)}.map((v) => [v, process.env[v] ?? null])) }));
})();
`;

describe('exec --trace', () => {
  it("gives the command Claude Code's trace variables, pointed at llm-route's collector; its traceparent parents the request's span", async () => {
    const receiver = await OtlpReceiver.start();
    h.defer(() => receiver.close());
    const up = await h.fake();
    up.always((ctx) => ctx.json(200, completion('hi')));
    const file = join(cli.dir, `exec-trace-${up.port}.yaml`);
    writeFileSync(
      file,
      configYaml({
        tiers: [{ name: 'local', url: up.url }],
        top: { telemetry: { otlp: { endpoint: receiver.url, headers: { 'x-api-key': 'collector key,1' } } } },
      }),
    );
    const proc = runCli(cli.bin, ['exec', '--trace', '-c', file, '--', process.execPath, '-e', CHILD], {
      LLM_ROUTE_CONFIG: undefined,
      OTEL_SERVICE_NAME: 'mine',
    });
    expect((await proc.exited).code).toBe(0);
    const report = JSON.parse(proc.lines[0]) as { status: number; env: Record<string, string | null> };
    expect(report.status).toBe(200);
    expect(report.env).toEqual({
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      CLAUDE_CODE_ENHANCED_TELEMETRY_BETA: '1',
      CLAUDE_CODE_PROPAGATE_TRACEPARENT: '1',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=collector%20key%2C1',
      OTEL_SERVICE_NAME: null,
    });
    // Flushed as exec's proxy closed: the request's span, in the command's trace, under its span.
    const server = receiver.spans.find((s) => s.kind === SERVER);
    expect(server).toMatchObject({
      traceId: '5b8efff798038103d269b633813fc60c',
      parentSpanId: 'eee19b7ec3c1b174',
      name: 'POST /v1/messages',
      attributes: { 'llm_route.protocol': 'messages' },
    });
    expect(receiver.exports[0].headers['x-api-key']).toBe('collector key,1');
  }, 60_000);

  it('refuses --trace when llm-route has no traces to join, before running the command', async () => {
    const up = await h.fake();
    const file = join(cli.dir, `exec-notrace-${up.port}.yaml`);
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: up.url }] }));
    const proc = runCli(cli.bin, ['exec', '--trace', '-c', file, '--', process.execPath, '-e', 'console.log("ran")'], {
      LLM_ROUTE_CONFIG: undefined,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
    });
    expect((await proc.exited).code).toBe(2);
    expect(proc.lines).toEqual([]);
    expect(proc.stderr()).toContain(
      "llm-route exec: --trace joins the command's traces to llm-route's, but traces are off: set telemetry.otlp in the tier file, or OTEL_EXPORTER_OTLP_ENDPOINT",
    );
  }, 60_000);
});
