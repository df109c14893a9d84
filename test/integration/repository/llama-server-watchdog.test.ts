import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { closedPort, processAlive, processRunning as running } from '../../helpers/ports.js';

/**
 * A server a test starts dies with the test runner (docs/development.md, "Real llama.cpp tests"):
 * scripts/real-llama/start.sh with WATCH_PIDS, as the real-llama helper calls it, against a
 * stand-in llama-server (a node script that answers /health) in a LLAMA_DIR of the test's own,
 * started by a stand-in test runner that this test then kills with SIGKILL.
 */

let dir: string;
const started: number[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-route-watchdog-'));
  mkdirSync(join(dir, 'llama.cpp/build/bin'), { recursive: true });
  mkdirSync(join(dir, 'models'));
  writeFileSync(join(dir, 'models/random-smollm2-shape-f16.gguf'), '');
  const server = join(dir, 'llama.cpp/build/bin/llama-server');
  writeFileSync(
    server,
    `#!${process.execPath}
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
require('node:http').createServer((req, res) => res.end('{"status":"ok"}')).listen(port, '127.0.0.1');
`,
  );
  chmodSync(server, 0o755);
});

afterAll(() => {
  for (const pid of started) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A stand-in test runner: it starts the server as the helper does (WATCH_PIDS its own pid and its
 * parent's) and then idles, as a runner does while its tests run. Resolves with the pids.
 */
async function runnerWithServer(): Promise<{ runner: number; server: number; watchdog: number }> {
  const port = await closedPort();
  const script = `
const { execFile } = require('node:child_process');
const env = { ...process.env, LLAMA_DIR: ${JSON.stringify(dir)}, WATCH_PIDS: process.pid + ' ' + process.ppid };
execFile(${JSON.stringify(join(repoRoot, 'scripts/real-llama/start.sh'))}, ['${port}'], { env }, (error, stdout, stderr) => {
  if (error) { console.error(stderr); process.exit(1); }
  console.log('ready');
  setInterval(() => {}, 60_000);
});`;
  const runner = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(runner.pid as number);
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: runner.stdout }).on('line', (line) => line === 'ready' && resolve());
    runner.once('exit', (code) => reject(new Error(`the stand-in runner exited (${code}) before its server was ready`)));
  });
  const pidOf = (name: string) => Number(readFileSync(join(dir, `llama-server.${port}.${name}`), 'utf8'));
  const pids = { runner: runner.pid as number, server: pidOf('pid'), watchdog: pidOf('watchdog.pid') };
  started.push(pids.server, pids.watchdog);
  return pids;
}

describe('a llama-server a test starts', () => {
  it('dies when its test runner is killed with SIGKILL (no handler of the runner runs), and so does its watchdog', async () => {
    const { runner, server, watchdog } = await runnerWithServer();
    expect(running(server)).toBe(true);
    expect(running(watchdog)).toBe(true);
    // Its own session: a signal to the runner's process group does not reach it (only the watchdog ends it).
    process.kill(runner, 'SIGKILL');
    await until(() => !running(server), 15_000, 'the server to stop after its runner was killed');
    await until(() => !running(watchdog), 5_000, 'the watchdog to exit');
  }, 40_000);

  it('outlives nothing else: a server stopped normally takes its watchdog with it, and the runner lives on', async () => {
    const { runner, server, watchdog } = await runnerWithServer();
    process.kill(server, 'SIGTERM');
    await until(() => !running(watchdog), 5_000, 'the watchdog to exit with its server');
    expect(running(runner)).toBe(true);
    process.kill(runner, 'SIGKILL');
  }, 40_000);
});
