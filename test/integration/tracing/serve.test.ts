import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, repoRoot, runCli } from '../../helpers/cli.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { CLIENT, OtlpReceiver, SERVER } from '../../helpers/otlp-receiver.js';
import { configYaml } from '../../helpers/proxy.js';

// docs/traces.md, with the package as it ships (the bundle, run through bin's shebang): `serve`
// with the standard OTEL_* variables loads its tracing bundle file and nothing else of them, sends
// a request's spans, in the client's trace, and flushes what it holds when it is stopped.
const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
  writeFileSync(
    join(cli.dir, 'hook.mjs'),
    "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('URL ' + r.url + '\\n'); return r; }\n",
  );
  writeFileSync(join(cli.dir, 'register.mjs'), "import { register } from 'node:module'; register('./hook.mjs', import.meta.url);\n");
}, 60_000);
afterAll(() => cli?.remove());

describe('serve with traces on', () => {
  it("sends a request's spans in the client's trace; flushes them at SIGTERM; loads the tracing bundle file only", async () => {
    const receiver = await OtlpReceiver.start();
    h.defer(() => receiver.close());
    const up = await h.fake();
    up.always(healthyStream(['traced']));
    const file = join(cli.dir, `traces-${up.port}.yaml`);
    writeFileSync(file, configYaml({ tiers: [{ name: 'local', url: up.url }] }));
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], {
      LLM_ROUTE_CONFIG: undefined,
      NODE_OPTIONS: `--import ${join(cli.dir, 'register.mjs')}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'router-under-test',
      // A batch a minute away: only the flush at SIGTERM can send these spans.
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    h.defer(() => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    });
    const { url } = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${trace}-b7ad6b7169203331-01` },
      body: JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(await res.text()).toContain('traced');
    await waitFor(() => proc.lines.some((l) => l.includes('"event":"request"')), 5000, 'the request line');
    expect(receiver.spans).toHaveLength(0);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    const server = receiver.spans.find((s) => s.kind === SERVER);
    expect(server).toMatchObject({ traceId: trace, parentSpanId: 'b7ad6b7169203331', resource: { 'service.name': 'router-under-test' } });
    expect(receiver.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === server?.spanId)).toHaveLength(1);
    expect(receiver.errors).toEqual([]);

    // Of the bundle, the tracing file came in (with the OpenTelemetry modules it holds), loaded from nothing else.
    const urls = proc
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('URL '))
      .map((line) => line.slice(4));
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
    const tracingFile = Object.keys(manifest).find((name) => manifest[name].includes('dist/tracing/tracing.js')) as string;
    expect(manifest[tracingFile].some((id) => id.includes('/@opentelemetry/otlp-transformer/'))).toBe(true);
    expect(urls.some((u) => u.endsWith(`/dist/bundle/${tracingFile}`))).toBe(true);
    expect(urls.filter((u) => u.includes('/node_modules/@opentelemetry/'))).toEqual([]);
  }, 60_000);
});
