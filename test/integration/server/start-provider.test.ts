import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../src/config/schema.js';
import { spawnGroup } from '../../../src/launch/process-group.js';
import { checkReadiness } from '../../../src/health/readiness.js';
import { ensureProviderStarted, startProviders, type OutputStream, type StartedProvider } from '../../../src/launch/start-provider.js';
import { parseMockOptions } from '../../../src/mock/options.js';
import { startMock } from '../../../src/mock/server.js';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { waitFor } from '../../helpers/harness.js';

// Local tiers that start themselves: a real child process tree is started, waited for and
// stopped, and no process may be left behind.

/** A tiny OpenAI-ish server that listens only after a delay, like a model server loading. */
const FAKE_SERVER = `
const http = require('node:http');
const port = Number(process.argv[2]);
const delayMs = Number(process.argv[3] || 300);
console.log('fake-server pid ' + process.pid + ' starting on ' + port);
console.error('fake-server: loading the model');
const send = (res, status, body) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
setTimeout(() => {
  http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      if (req.url === '/v1/models') return send(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model' }] });
      if (req.url !== '/v1/chat/completions') return send(res, 404, { error: { message: 'not found' } });
      const body = JSON.parse(text);
      const id = 'chatcmpl-fake', created = Math.floor(Date.now() / 1000), model = body.model;
      if (!body.stream) {
        return send(res, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message: { role: 'assistant', content: 'hello from fake-server' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 } });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta, finish) => 'data: ' + JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
      res.end(chunk({ content: 'hello from fake-server' }, null) + chunk({}, 'stop') + 'data: [DONE]\\n\\n');
    });
  }).listen(port, '127.0.0.1', () => console.log('fake-server listening'));
}, delayMs);
`;

/**
 * llama-server as it starts: the port is open at once, and every endpoint answers 503
 * Loading model until the model is loaded (after argv[3] ms); then /health is 200.
 */
const LOADER = `
const http = require('node:http');
const port = Number(process.argv[2]);
const loadMs = Number(process.argv[3]);
const startedAt = Date.now();
console.log('loader pid ' + process.pid);
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const send = (status, body) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (Date.now() - startedAt < loadMs) return send(503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } });
    if (req.url === '/health') return send(200, { status: 'ok' });
    if (req.url === '/v1/models') return send(200, { object: 'list', data: [{ id: 'tiny', object: 'model' }] });
    send(404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
  });
}).listen(port, '127.0.0.1');
`;

/** Prints its pid, then never answers anything. */
const NEVER_READY = `console.log('never-ready pid ' + process.pid); setInterval(() => {}, 1000);`;

/** Prints its pid and ignores SIGTERM: only SIGKILL ends it. */
const STUBBORN = `process.on('SIGTERM', () => console.log('ignoring SIGTERM')); console.log('stubborn pid ' + process.pid); setInterval(() => {}, 1000);`;

let dir: string;
let fakeServer: string;
let neverReady: string;
let stubborn: string;
let loader: string;
const node = JSON.stringify(process.execPath);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-route-start-'));
  fakeServer = join(dir, 'fake-server.js');
  neverReady = join(dir, 'never-ready.js');
  stubborn = join(dir, 'stubborn.js');
  writeFileSync(fakeServer, FAKE_SERVER);
  writeFileSync(neverReady, NEVER_READY);
  writeFileSync(stubborn, STUBBORN);
  loader = join(dir, 'loader.js');
  writeFileSync(loader, LOADER);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function provider(baseUrl: string, command: string, readyTimeoutMs = 5_000): Provider {
  return {
    name: 'fake',
    type: 'openai',
    base_url: baseUrl,
    local: true,
    health: { interval_ms: undefined, timeout_ms: 2_000, ttft_check: false, warmup: false, keepalive_ms: 240_000 },
    start: { command, ready_timeout_ms: readyTimeoutMs },
  };
}

/** Collects what ensureProviderStarted reports. */
function recorder() {
  const lines: Array<{ stream: OutputStream; line: string }> = [];
  return {
    lines,
    onOutput: (stream: OutputStream, line: string) => lines.push({ stream, line }),
    /** The pids the test scripts printed as `... pid N ...`. */
    pids: () => lines.flatMap(({ line }) => /\bpid (\d+)\b/.exec(line)?.[1] ?? []).map(Number),
  };
}

/** Gone, or exited and only waiting to be reaped (a zombie runs nothing and holds no port). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}

describe('ensureProviderStarted', () => {
  it('starts a provider that does not answer, waits until it does, relays its output, and stop() ends it', async () => {
    const port = await freePort();
    const fake = provider(`http://127.0.0.1:${port}/v1`, `${node} ${JSON.stringify(fakeServer)} ${port}`);
    const out = recorder();

    const started = (await ensureProviderStarted(fake, { readiness: () => checkReadiness(fake), onOutput: out.onOutput })) as StartedProvider;

    expect(started).not.toBeNull();
    expect((await checkReadiness(fake)).state).toBe('ready');
    expect(out.lines).toContainEqual({ stream: 'stdout', line: `fake-server pid ${out.pids()[0]} starting on ${port}` });
    expect(out.lines).toContainEqual({ stream: 'stderr', line: 'fake-server: loading the model' });
    expect(out.lines.at(-1)).toMatchObject({ stream: 'status', line: expect.stringMatching(/^ready after \d+ ms/) });
    const serverPid = out.pids()[0];
    expect(() => process.kill(started.pid, 0)).not.toThrow();

    await started.stop();
    expect(() => process.kill(started.pid, 0)).toThrow();
    expect(isGone(serverPid)).toBe(true);
    expect((await checkReadiness(fake)).state).toBe('down');
    await started.stop(); // idempotent
  });

  it('a server that answers 503 Loading model is not ready until it has loaded; the wait is shown', async () => {
    const port = await freePort();
    const LOAD_MS = 1_500;
    const llama = provider(`http://127.0.0.1:${port}/v1`, `${node} ${JSON.stringify(loader)} ${port} ${LOAD_MS}`);
    const out = recorder();
    const seen: string[] = [];
    const readiness = async () => {
      const now = await checkReadiness(llama);
      seen.push(now.state);
      return now;
    };

    const started = (await ensureProviderStarted(llama, { readiness, onOutput: out.onOutput })) as StartedProvider;
    try {
      expect(seen).toContain('loading');
      expect(seen.at(-1)).toBe('ready');
      const status = out.lines.filter((l) => l.stream === 'status').map((l) => l.line);
      expect(status).toContainEqual('answering, still loading (HTTP 503: Loading model); waiting');
      const ready = /^ready after (\d+) ms \(pid \d+; it was loading for (\d+) ms of that\)$/.exec(status.at(-1) ?? '');
      expect(ready, status.join('\n')).not.toBeNull();
      // The loader counts from its own start, a little after the spawn: never ready before LOAD_MS.
      expect(Number(ready?.[1])).toBeGreaterThanOrEqual(LOAD_MS);
      expect(Number(ready?.[2])).toBeGreaterThan(0);
      expect(await checkReadiness(llama)).toEqual({ state: 'ready', via: 'GET /health 200' });
    } finally {
      await started.stop();
    }
  });

  it('a server still loading when llm-route starts is not started again', async () => {
    const port = await freePort();
    const running = spawnGroup(`${node} ${JSON.stringify(loader)} ${port} 60000`);
    try {
      const already = provider(`http://127.0.0.1:${port}/v1`, 'false');
      let state = (await checkReadiness(already)).state;
      for (let i = 0; i < 50 && state === 'down'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = (await checkReadiness(already)).state;
      }
      expect(state).toBe('loading');
      const out = recorder();
      expect(await ensureProviderStarted(already, { readiness: () => checkReadiness(already), onOutput: out.onOutput })).toBeNull();
      expect(out.lines).toEqual([
        {
          stream: 'status',
          line: expect.stringMatching(
            /^already answering \(still loading \(HTTP 503: Loading model\)\) at http:\/\/127\.0\.0\.1:\d+\/v1; not running `false`$/,
          ),
        },
      ]);
    } finally {
      await running.stop();
    }
  });

  it('does not start a provider that already answers', async () => {
    const mock = await startMock(parseMockOptions({ name: 'up' }));
    try {
      const marker = join(dir, 'started-anyway');
      const up = provider(mock.url, `${node} -e ${JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`)}`);
      const out = recorder();
      expect(await ensureProviderStarted(up, { readiness: () => checkReadiness(up), onOutput: out.onOutput })).toBeNull();
      expect(out.lines).toEqual([{ stream: 'status', line: expect.stringContaining('already answering') }]);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await mock.close();
    }
  });

  it('does nothing for a provider without start', async () => {
    const { start: _none, ...plain } = provider('http://127.0.0.1:1/v1', 'unused');
    const readiness = () => Promise.reject(new Error('must not be asked'));
    expect(await ensureProviderStarted(plain, { readiness, onOutput: () => undefined })).toBeNull();
  });

  it('fails with a clear error when the command never becomes ready, and kills its whole process tree', async () => {
    const port = await freePort();
    // Two processes under one shell: the background one is not the shell's pid, only its group's.
    const command = `${node} ${JSON.stringify(neverReady)} & ${node} ${JSON.stringify(neverReady)}`;
    const never = provider(`http://127.0.0.1:${port}/v1`, command, 1_000);
    const out = recorder();
    const startedAt = Date.now();

    const failure = ensureProviderStarted(never, { readiness: () => checkReadiness(never), onOutput: out.onOutput });

    await expect(failure).rejects.toThrow(`provider "fake" did not become ready within 1000 ms after \`${command}\``);
    await expect(failure).rejects.toThrow(/last output:\n {2}\[stdout\] never-ready pid \d+/);
    expect(Date.now() - startedAt).toBeLessThan(8_000);
    expect(out.pids()).toHaveLength(2);
    for (const pid of out.pids()) expect(isGone(pid), `pid ${pid}`).toBe(true);
  });

  it('fails at once with the exit code and last output when the command exits before it is ready', async () => {
    const port = await freePort();
    const command = `${node} -e ${JSON.stringify(`console.error('model qwen-x not found'); process.exit(3)`)}`;
    const broken = provider(`http://127.0.0.1:${port}/v1`, command, 30_000);
    const startedAt = Date.now();
    const failure = ensureProviderStarted(broken, { readiness: () => checkReadiness(broken), onOutput: () => undefined });
    await expect(failure).rejects.toThrow(
      `provider "fake": \`${command}\` exited with code 3 before it became ready; last output:\n  [stderr] model qwen-x not found`,
    );
    expect(Date.now() - startedAt).toBeLessThan(5_000);
  });

  it('stops a command still starting when the signal aborts', async () => {
    const port = await freePort();
    const slow = provider(`http://127.0.0.1:${port}/v1`, `${node} ${JSON.stringify(neverReady)}`, 30_000);
    const out = recorder();
    const abort = new AbortController();
    const starting = ensureProviderStarted(slow, { readiness: () => checkReadiness(slow), onOutput: out.onOutput, signal: abort.signal });
    // Aborted once the command is running (it said its pid), however long a loaded machine takes to start it.
    await waitFor(() => out.pids().length > 0 || undefined, 20_000, 'the command to say its pid');
    abort.abort(new Error('user pressed Ctrl-C'));
    await expect(starting).rejects.toThrow('user pressed Ctrl-C');
    expect(out.pids()).toHaveLength(1);
    expect(isGone(out.pids()[0])).toBe(true);
  });
});

describe('spawnGroup', () => {
  it('kills with SIGKILL what ignores SIGTERM', async () => {
    const child = spawnGroup(`${node} ${JSON.stringify(stubborn)}`, { killAfterMs: 500 });
    const firstLine = await new Promise<string>((resolve) => child.stdout.once('data', (data: Buffer) => resolve(String(data))));
    const stubbornPid = Number(/pid (\d+)/.exec(firstLine)?.[1]);
    const startedAt = Date.now();
    await child.stop();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(450);
    expect(() => process.kill(child.pid, 0)).toThrow();
    expect(isGone(stubbornPid), `pid ${stubbornPid}`).toBe(true);
  });
});

describe('startProviders', () => {
  it('starts what is down, skips what is up, reports what failed, and stops all', async () => {
    const mock = await startMock(parseMockOptions({ name: 'up' }));
    const port = await freePort();
    const deadPort = await freePort();
    const providers = new Map<string, Provider>([
      ['down', { ...provider(`http://127.0.0.1:${port}/v1`, `${node} ${JSON.stringify(fakeServer)} ${port}`), name: 'down' }],
      ['up', { ...provider(mock.url, 'false'), name: 'up' }],
      ['broken', { ...provider(`http://127.0.0.1:${deadPort}/v1`, 'exit 5'), name: 'broken' }],
    ]);
    const events: Array<{ provider: string; stream: string; line: string }> = [];
    try {
      const result = await startProviders({ providers }, { onOutput: (event) => events.push(event) });
      expect([...result.started.keys()]).toEqual(['down']);
      expect([...result.failed.keys()]).toEqual(['broken']);
      expect(result.failed.get('broken')?.message).toContain('exited with code 5');
      expect(events).toContainEqual({ type: 'provider_output', provider: 'broken', stream: 'status', line: expect.stringContaining('could not start') });
      expect(events).toContainEqual({ type: 'provider_output', provider: 'up', stream: 'status', line: expect.stringContaining('already answering') });
      const pid = result.started.get('down')!.pid;
      await result.stopAll();
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      await mock.close();
    }
  });
});

describe('llm-route exec with a provider that starts itself', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  });
  afterAll(() => cli?.remove());

  it('starts the provider, the child request goes through it, and the provider is gone after exec exits', async () => {
    const port = await freePort();
    const config = join(dir, 'auto-start.yaml');
    const command = `${node} ${JSON.stringify(fakeServer)} ${port}`;
    writeFileSync(
      config,
      [
        'version: 1',
        'providers:',
        '  fake:',
        '    type: openai',
        `    base_url: http://127.0.0.1:${port}/v1`,
        `    start: { command: ${JSON.stringify(command)}, ready_timeout_ms: 5000 }`,
        'routes:',
        '  chat:',
        '    tiers:',
        '      - { provider: fake, model: fake-model }',
        '',
      ].join('\n'),
    );
    const child = `
      (async () => {
        const res = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
        });
        const body = await res.json();
        console.log(res.status + ' ' + body.choices[0].message.content);
      })();`;

    const run = runCli(cli.bin, ['exec', '-c', config, '--', process.execPath, '-e', child]);
    const { code } = await run.exited;

    expect(code, run.stderr()).toBe(0);
    expect(run.lines).toEqual(['200 hello from fake-server']);
    const serverPid = Number(/\[fake\] fake-server pid (\d+) starting/.exec(run.stderr())?.[1]);
    expect(serverPid).toBeGreaterThan(0);
    expect(run.stderr()).toMatch(/\[fake\] ready after \d+ ms/);
    expect(isGone(serverPid)).toBe(true);
    expect((await checkReadiness({ type: 'openai', base_url: `http://127.0.0.1:${port}/v1` })).state).toBe('down');
  });

  it('stops a provider still starting when exec gets SIGTERM, and does not run the command', async () => {
    const port = await freePort();
    const config = join(dir, 'slow-start.yaml');
    const command = `${node} ${JSON.stringify(neverReady)}`;
    writeFileSync(
      config,
      [
        'version: 1',
        'providers:',
        '  slow:',
        '    type: openai',
        `    base_url: http://127.0.0.1:${port}/v1`,
        `    start: { command: ${JSON.stringify(command)}, ready_timeout_ms: 30000 }`,
        'routes:',
        '  chat:',
        '    tiers:',
        '      - { provider: slow, model: m }',
        '',
      ].join('\n'),
    );
    const run = runCli(cli.bin, ['exec', '-c', config, '--', process.execPath, '-e', 'console.log("ran")']);
    const pidLine = /\[slow\] never-ready pid (\d+)/;
    const deadline = Date.now() + 10_000;
    while (!pidLine.test(run.stderr()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    run.child.kill('SIGTERM');
    const { code } = await run.exited;

    expect(code).toBe(143);
    expect(run.lines).toEqual([]);
    const pid = Number(pidLine.exec(run.stderr())?.[1]);
    expect(isGone(pid), `pid ${pid}`).toBe(true);
  });
});
