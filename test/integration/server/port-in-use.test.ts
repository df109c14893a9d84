import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildPrivateCli, repoRoot, runCli, type CliProcess } from '../../helpers/cli.js';
import { sleep, useHarness } from '../../helpers/harness.js';
import { busyPort, processAlive } from '../../helpers/ports.js';

/**
 * Every command that binds a port says a busy port the way `serve` does (its test:
 * serve-port.test.ts), exits 1 at once, and leaves no process behind: `demo` used to hang with
 * its two mock children running, `exec` printed the raw `listen EADDRINUSE`.
 */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;

beforeAll(() => {
  cli = buildPrivateCli();
  // The demo reads examples/demo.yaml beside the CLI.
  cpSync(join(repoRoot, 'examples'), join(cli.dir, 'examples'), { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'llm-route-port-in-use-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function inUse(command: string, port: number): string {
  return `llm-route ${command}: cannot listen on 127.0.0.1:${port}: the port is already in use (another llm-route?); stop it or choose another with --port\n`;
}

/** Its exit, or null when it is still running after `ms` (then it is killed). */
async function exitWithin(proc: CliProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | null> {
  h.defer(() => {
    if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
  });
  return Promise.race([proc.exited, sleep(ms).then(() => null)]);
}

/** Pids of the processes whose command line runs this test's private copy of the CLI. */
function processesOfPrivateCli(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(cli.dir))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

describe('a busy port', () => {
  it("demo: serve's line, exit 1 within seconds, and both mock children stopped", async () => {
    const port = await busyPort(h.defer);
    const proc = runCli(cli.bin, ['demo', '--port', String(port), '--no-ui']);
    // The mock children's pids, seen while the demo starts them (they run the private CLI).
    const seen = new Set<number>();
    const watching = (async () => {
      while (proc.child.exitCode === null) {
        for (const pid of processesOfPrivateCli()) if (pid !== proc.child.pid) seen.add(pid);
        await sleep(25);
      }
    })();
    const exit = await exitWithin(proc, 20_000);
    await watching;
    expect(exit, proc.stderr()).toEqual({ code: 1, signal: null });
    expect(proc.stderr()).toBe(inUse('demo', port));
    expect(proc.lines).toEqual([]);
    expect(seen.size, 'the two mock children were seen running').toBeGreaterThanOrEqual(2);
    // No child of it is left (the mocks are killed before the demo exits, so none is orphaned).
    await expect.poll(() => [...seen].filter(processAlive), { timeout: 5_000, interval: 100 }).toEqual([]);
    expect(processesOfPrivateCli()).toEqual([]);
  }, 40_000);

  it("exec: serve's line, exit 1, and neither the provider's start: command nor the command ran", async () => {
    const port = await busyPort(h.defer);
    const startedPid = join(dir, 'provider.pid');
    const ranMarker = join(dir, 'command-ran');
    // A provider that would record its pid and stay up: it must never be started.
    const startCommand = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(startedPid)}, String(process.pid)); setInterval(() => {}, 1000)`)}`;
    const file = join(dir, 'exec.yaml');
    writeFileSync(
      file,
      stringify({
        version: 1,
        providers: { local: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', start: { command: startCommand, ready_timeout_ms: 3_000 } } },
        routes: { chat: { tiers: [{ provider: 'local', model: 'm' }] } },
      }),
    );
    const proc = runCli(cli.bin, [
      'exec',
      '--port',
      String(port),
      '-c',
      file,
      '--',
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(ranMarker)}, 'ran')`,
    ]);
    const exit = await exitWithin(proc, 15_000);
    expect(exit, proc.stderr()).toEqual({ code: 1, signal: null });
    expect(proc.stderr()).toBe(inUse('exec', port));
    expect(existsSync(ranMarker)).toBe(false);
    if (existsSync(startedPid)) {
      const pid = Number(readFileSync(startedPid, 'utf8'));
      expect.fail(`the provider's start: command ran (pid ${pid}, ${processAlive(pid) ? 'still running' : 'stopped'})`);
    }
  }, 30_000);

  it("mock: serve's line and exit 1", async () => {
    const port = await busyPort(h.defer);
    const proc = runCli(cli.bin, ['mock', '--port', String(port)]);
    const exit = await exitWithin(proc, 10_000);
    expect(exit, proc.stderr()).toEqual({ code: 1, signal: null });
    expect(proc.stderr()).toBe(inUse('mock', port));
    expect(proc.lines).toEqual([]);
  }, 20_000);
});
