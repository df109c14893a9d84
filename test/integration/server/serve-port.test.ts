import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { sleep, useHarness } from '../../helpers/harness.js';
import { withModelList } from '../../helpers/control-kit.js';
import { busyPort } from '../../helpers/ports.js';

/** `llm-route serve` binds its port before anything else: a busy port sends nothing upstream. */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-serve-port-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A local tier (warmed up, checked every 50 ms) and a provider whose `start:` leaves a marker file. */
function tierFile(localUrl: string, marker: string, port: number): string {
  const file = join(dir, `serve-${port}.yaml`);
  const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`)}`;
  writeFileSync(
    file,
    stringify({
      version: 1,
      server: { port },
      providers: {
        local: { type: 'openai', base_url: localUrl, health: { interval_ms: 50, ttft_check: true } },
        starts: { type: 'openai', base_url: 'http://127.0.0.1:1/v1', start: { command, ready_timeout_ms: 500 } },
      },
      routes: {
        chat: {
          tiers: [
            { provider: 'local', model: 'local-model' },
            { provider: 'starts', model: 'm' },
          ],
        },
      },
    }),
  );
  return file;
}

describe('serve on a busy port', () => {
  it('one clear line on stderr, exit 1, and no upstream traffic: no warm-up, no check, no start: command', async () => {
    const local = await h.fake();
    local.always(withModelList(['local-model'], healthyStream(['hi'])));
    const port = await busyPort(h.defer);
    const marker = join(dir, 'busy-marker');
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', tierFile(local.url, marker, port)], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    });

    const exit = await Promise.race([proc.exited, sleep(10_000).then(() => null)]);
    expect(exit, proc.stderr()).toEqual({ code: 1, signal: null });
    expect(proc.stderr()).toBe(
      `llm-route serve: cannot listen on 127.0.0.1:${port}: the port is already in use (another llm-route?); stop it or choose another with --port\n`,
    );
    expect(proc.lines).toEqual([]);
    await sleep(300); // anything sent late would have arrived by now
    expect(local.requests).toHaveLength(0);
    expect(existsSync(marker)).toBe(false);
  }, 20_000);

  it('the control case: on a free port it listens first, then runs start: and warms up', async () => {
    const local = await h.fake();
    local.always(withModelList(['local-model'], healthyStream(['hi'])));
    const marker = join(dir, 'free-marker');
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', tierFile(local.url, marker, 0)], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => {
      if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    });
    await proc.waitForLine((l) => l.includes('"could not start"') || l.includes('could not start'), 15_000);
    const events = proc.lines.map((l) => (JSON.parse(l) as { event: string }).event);
    expect(events[0]).toBe('listening');
    expect(events.indexOf('provider_output')).toBeGreaterThan(0);
    expect(existsSync(marker)).toBe(true);
    const deadline = Date.now() + 5_000;
    while (!local.requests.some((r) => r.body.max_tokens === 1) && Date.now() < deadline) await sleep(20);
    expect(local.requests.some((r) => r.body.max_tokens === 1)).toBe(true);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  }, 30_000);
});
