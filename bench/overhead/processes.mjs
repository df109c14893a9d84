// Starts the benchmark's servers as child processes, and makes sure none outlives the benchmark:
// every child is stopped at the end, on Ctrl-C / SIGTERM, and (SIGKILL) on any other exit.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs } from './procfs.mjs';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = `${ROOT}bin/llm-route.js`;
export const PORTKEY_BIN = `${ROOT}node_modules/@portkey-ai/gateway/build/start-server.js`;

const children = new Set();

/** One child process. stdout is a pipe that is always drained (newlines are counted), stderr keeps its tail. */
export class Child {
  constructor(name, args, { env, nodeArgs = [] } = {}) {
    this.name = name;
    this.proc = spawn(process.execPath, [...nodeArgs, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.pid = this.proc.pid;
    this.stdoutLines = 0;
    this.head = ''; // stdout text until the awaited line has been seen
    this.watching = true;
    this.stderrTail = '';
    this.exitCode = undefined;
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        this.exitCode = code ?? signal;
        children.delete(this);
        resolve(this.exitCode);
      });
    });
    children.add(this);
    this.proc.stdout.on('data', (chunk) => {
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) this.stdoutLines++;
      if (this.watching) this.head = (this.head + chunk.toString('utf8')).slice(-65536);
    });
    this.proc.stderr.on('data', (chunk) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4096);
    });
  }

  get alive() {
    return this.exitCode === undefined;
  }

  /** Waits for stdout to match `pattern`; returns the match. */
  waitFor(pattern, timeoutMs = 15_000) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.head);
        if (match) {
          done();
          this.watching = false;
          this.head = '';
          resolve(match);
        }
      };
      const onExit = () => {
        done();
        reject(new Error(`${this.name} exited (${this.exitCode}) before it was ready:\n${this.head}\n${this.stderrTail}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name} not ready within ${timeoutMs} ms:\n${this.head}\n${this.stderrTail}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.proc.stdout.off('data', check);
        this.proc.off('exit', onExit);
      };
      this.proc.stdout.on('data', check);
      this.proc.once('exit', onExit);
      check();
    });
  }

  /** SIGTERM, a second SIGTERM after a second (llm-route serve then stops draining), SIGKILL after two. */
  async stop() {
    if (!this.alive) return this.exitCode;
    const signal = (name) => {
      if (this.alive) this.proc.kill(name);
    };
    signal('SIGTERM');
    const t1 = setTimeout(() => signal('SIGTERM'), 1000);
    const t2 = setTimeout(() => signal('SIGKILL'), 2000);
    const code = await this.exited;
    clearTimeout(t1);
    clearTimeout(t2);
    return code;
  }
}

export async function stopAll() {
  await Promise.all([...children].map((child) => child.stop()));
}

let installed = false;

/** Ctrl-C / SIGTERM / SIGHUP stop every child, then exit; any other exit SIGKILLs what is left. */
export function installCleanup() {
  if (installed) return;
  installed = true;
  let stopping = false;
  const onSignal = (signal) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: stopping ${children.size} child process(es)\n`);
    stopAll().finally(() => process.exit(130));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, onSignal);
  process.on('exit', () => {
    for (const child of children) {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** A free TCP port on 127.0.0.1 (for the peer, which cannot listen on port 0 and report it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `llm-route mock` on a free loopback port; resolves with its /v1 base URL. */
export async function startMock(name, flags = []) {
  const child = new Child(`mock ${name}`, [CLI, 'mock', '--port', '0', '--name', name, ...flags]);
  const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/);
  return { child, url, pid: child.pid };
}

/**
 * `llm-route serve --no-ui -c FILE`. Its stdout (the `listening` line, then one JSON log line per
 * request) is a pipe this process drains; `child.stdoutLines` counts the lines.
 */
export async function startServe(configPath, { nodeArgs = [], cli = CLI, name = 'llm-route serve' } = {}) {
  const child = new Child(name, [cli, 'serve', '--no-ui', '-c', configPath], { nodeArgs });
  const [, url] = await child.waitFor(/"event":"listening"[^\n]*?"url":"([^"]+)"/);
  return { child, url, pid: child.pid };
}

/**
 * Portkey's open-source gateway: `start-server.js --port=N --headless` (no console UI / log stream).
 * It listens on all interfaces (its Node entry point takes no host); the benchmark only talks to 127.0.0.1.
 */
export async function startPortkey() {
  const port = await freePort();
  const child = new Child('portkey gateway', [PORTKEY_BIN, `--port=${port}`, '--headless']);
  await child.waitFor(/Ready for connections/, 20_000);
  return { child, url: `http://127.0.0.1:${port}/v1`, pid: child.pid, port };
}

/** A helper server of this folder (bare upstream, naive pipe) that prints `listening on URL`. */
export async function startScript(name, file, args = []) {
  const child = new Child(name, [fileURLToPath(new URL(file, import.meta.url)), ...args]);
  const [, url] = await child.waitFor(/listening on (http:\/\/\S+)/);
  return { child, url, pid: child.pid };
}

/** CPU time so far of this process and every live child, in milliseconds. */
export function ourCpuMs() {
  let total = cpuMs(process.pid);
  for (const child of children) {
    try {
      total += cpuMs(child.pid);
    } catch {
      // exited since
    }
  }
  return total;
}

/**
 * `llm-route serve` in front of the given openai-type providers ({ name: base URL }, no warm-ups)
 * under the routes given as YAML lines (each `  name: {...}`); the tier file and the usage log go
 * to a temp dir. `cli`: another checkout's bin/llm-route.js (an A/B of two builds).
 */
export async function startServeWith({ providers, routes, tmpPrefix, cli, name, usageOff = false }) {
  const tmp = mkdtempSync(join(tmpdir(), tmpPrefix));
  const config = join(tmp, 'tiers.yaml');
  writeFileSync(
    config,
    [
      'version: 1',
      'server: { port: 0 }',
      usageOff ? 'usage: { enabled: false }' : `usage: { path: ${JSON.stringify(join(tmp, 'usage.db'))} }`,
      'providers:',
      ...Object.entries(providers).map(([name, url]) => `  ${name}: { type: openai, base_url: ${JSON.stringify(url)}, health: { warmup: false } }`),
      'routes:',
      ...routes,
      '',
    ].join('\n'),
  );
  return startServe(config, { cli, name });
}

/**
 * A fast mock (`tokens` per answer) and one `llm-route serve` in front of it, as its one openai
 * tier `fast` (model m) under the routes given as YAML lines. For the benches that compare routes
 * or protocols on one tier.
 */
export async function startServeOnMock({ tokens, routes, tmpPrefix }) {
  const mock = await startMock('fast', ['--tokens', String(tokens)]);
  return { mock, serve: await startServeWith({ providers: { fast: mock.url }, routes, tmpPrefix }) };
}

/**
 * The A/B benches' set (bench/cpu-at-rate.mjs, bench/first-content.mjs): a fast mock (`tokens`
 * per answer) and, in front of it, the json pipe, this checkout's `llm-route serve` and, with
 * `other` (the folder of another checkout, built), that build's; with `usageOff`, this checkout's
 * serve once more with its usage log off (what the usage row costs). Each target: { label, url, pid, model }.
 */
export async function startAbTargets({ tokens, other, tmpPrefix, usageOff = false }) {
  const mock = await startMock('fast', ['--tokens', String(tokens)]);
  const pipe = await startScript('json pipe', './json-pipe.mjs', [mock.url, 'm']);
  const serveOn = (cli, name, off = false) =>
    startServeWith({ providers: { fast: mock.url }, routes: ['  bench: { tiers: [ { provider: fast, model: m } ] }'], tmpPrefix, cli, name, usageOff: off });
  const targets = [
    { label: 'json pipe', url: pipe.url, pid: pipe.pid, model: 'm' },
    { label: 'llm-route', ...(await serveOn(undefined, 'llm-route serve')), model: 'bench' },
  ];
  if (usageOff) targets.push({ label: 'llm-route, usage log off', ...(await serveOn(undefined, 'llm-route serve, usage log off', true)), model: 'bench' });
  if (other) targets.push({ label: `other (${other})`, ...(await serveOn(resolve(other, 'bin/llm-route.js'), 'other serve')), model: 'bench' });
  return { mock, targets };
}
