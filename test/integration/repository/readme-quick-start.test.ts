import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { closedPort } from '../../helpers/ports.js';

/**
 * The README's first lines, run as a newcomer would, in a fresh `git clone` of this repository
 * (its committed HEAD) with the command installed by `npm link` into a private npm prefix.
 * Two departures, both said here: `npm ci` is replaced by a link to this checkout's
 * node_modules (no network install), and `npm test` (the whole suite) is not run. Port 4141 is
 * held throughout, as on the machine where the demo used to hang: every command must end.
 */

const isGitCheckout = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--git-dir']).status === 0;
const IN_USE = 'cannot listen on 127.0.0.1:4141: the port is already in use (another llm-route?); stop it or choose another with --port';

let work: string;
let clone: string;
let prefixBin: string;
let held: Server | null = null;
/** A global npm prefix of "the user's", exported as many set it up: the test must never write there. */
let usersPrefix: string;
/** A folder of the user's PATH with Claude Code in it: a `claude` that exits 1 (a real one would wait for a person). */
let usersBin: string;
/** What the README's lines run besides llm-route: node, npm and sh, each linked here from where this machine has it. */
let toolsBin: string;

/**
 * The environment of a README line: this one's, as the user has it (with an exported
 * NPM_CONFIG_PREFIX of theirs), less what would change the outcome. Every npm setting goes,
 * whatever the case of its name (npm reads NPM_CONFIG_PREFIX and npm_config_prefix alike, and
 * the upper-case one wins): `npm link` must link into the private prefix, never the user's.
 */
function lineEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const outer: NodeJS.ProcessEnv = { ...process.env, NPM_CONFIG_PREFIX: usersPrefix, PATH: `${usersBin}:${process.env.PATH ?? ''}` };
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(outer)) if (!/_API_KEY$|^LLM_ROUTE_|^OLLAMA_HOST$|^LLAMA_ARG_|^VITEST|^npm_/i.test(k)) env[k] = v;
  // The user's PATH is not the line's: on it Claude Code may be installed (next to node, in
  // /usr/bin: `usersBin` stands for it), and a real `claude` would wait for a person. The lines
  // get the private prefix's bin and the few tools they run, nothing else of this machine's.
  const path = [prefixBin, toolsBin].join(':');
  // The user's ~/.npmrc is not read either: an empty one of the test's own.
  return { ...env, PATH: path, npm_config_prefix: dirname(prefixBin), npm_config_userconfig: join(work, 'npmrc'), ...extra };
}

/** The commands of the ```sh block that follows `after` in the README, comments dropped. */
function shBlock(readme: string, after: string): string[] {
  const from = readme.indexOf(after);
  const start = readme.indexOf('```sh\n', from) + '```sh\n'.length;
  const block = readme.slice(start, readme.indexOf('```', start));
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One README line in the clone, with the private prefix's bin first on PATH; killed (and failed) after `ms`. */
function run(line: string, ms: number, env: Record<string, string> = {}): Promise<Ran | 'hung'> {
  const child = spawn('sh', ['-c', line], { cwd: clone, env: lineEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('hung');
    }, ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Where a command is on this machine: beside this node first (npm is), then along PATH. */
function onPath(command: string): string {
  const dirs = [dirname(process.execPath), ...(process.env.PATH ?? '').split(':')];
  const found = dirs.map((dir) => join(dir, command)).find((file) => existsSync(file));
  if (!found) throw new Error(`${command} is not on PATH`);
  return found;
}

/** Processes still running the clone's CLI (none may outlive a command). */
function leftovers(): string[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(clone) && l.includes('llm-route'));
}

beforeAll(async () => {
  if (!isGitCheckout) return;
  work = mkdtempSync(join(tmpdir(), 'llm-route-quick-start-'));
  clone = join(work, 'llm-route');
  prefixBin = join(work, 'npm-prefix', 'bin');
  mkdirSync(prefixBin, { recursive: true });
  usersPrefix = join(work, 'users-global-prefix');
  mkdirSync(usersPrefix);
  writeFileSync(join(work, 'npmrc'), '');
  usersBin = join(work, 'users-bin');
  mkdirSync(usersBin);
  writeFileSync(join(usersBin, 'claude'), '#!/bin/sh\necho "claude: waiting for a person" >&2\nexit 1\n', { mode: 0o755 });
  toolsBin = join(work, 'tools');
  mkdirSync(toolsBin);
  for (const [tool, at] of [
    ['node', process.execPath],
    ['npm', onPath('npm')],
    ['sh', '/bin/sh'],
  ])
    symlinkSync(at, join(toolsBin, tool));
  execFileSync('git', ['clone', '--quiet', repoRoot, clone]);
  // 4141 taken: by this test, or already by something else (taken either way).
  held = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => {
    held!.once('error', () => {
      held = null;
      resolve();
    });
    held!.listen(4141, '127.0.0.1', resolve);
  });
}, 60_000);

afterAll(async () => {
  if (held) await new Promise((resolve) => held!.close(resolve));
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!isGitCheckout)('the README quick start, in a fresh clone, with 4141 taken', () => {
  it('installs llm-route with no registry, and every line ends: a busy port is one line and exit 1, never a hang', async () => {
    const readme = readFileSync(join(clone, 'README.md'), 'utf8');
    const top = shBlock(readme, '# llm-route');
    const quick = shBlock(readme, '## Quick start');
    expect(top).toEqual(['npm ci && npm link && llm-route demo', 'npm run test:unit', 'npm test']);
    expect(quick).toEqual(['npm ci && npm link', 'llm-route init', 'llm-route serve', 'llm-route exec -- claude']);
    expect(readme).not.toContain('npx llm-route');

    // npm ci → this checkout's node_modules (see above); npm link as written.
    symlinkSync(join(repoRoot, 'node_modules'), join(clone, 'node_modules'), 'dir');
    // offline: proof that it asks no registry.
    const link = await run('npm link', 180_000, { npm_config_offline: 'true' });
    expect(link).not.toBe('hung');
    expect((link as Ran).code, (link as Ran).stderr).toBe(0);
    expect(existsSync(join(prefixBin, 'llm-route'))).toBe(true);
    expect(readdirSync(usersPrefix)).toEqual([]); // the user's exported NPM_CONFIG_PREFIX untouched
    expect(existsSync(join(clone, 'dist/bundle/main.js'))).toBe(true); // prepare built it

    const demo = await run('llm-route demo', 30_000);
    expect(demo).not.toBe('hung');
    expect(demo).toMatchObject({ code: 1, stderr: `llm-route demo: ${IN_USE}\n` });
    expect(leftovers()).toEqual([]);

    // The message's own advice: another port. Off a TTY the demo writes JSON lines.
    const requests = await demoOnAnotherPort();
    expect(requests).toBeGreaterThanOrEqual(1);

    // init looks at this machine: no server on the ports it is pointed at, no key: the mock tiers.
    const closed = await closedPort();
    const init = await run('llm-route init', 30_000, { LLM_ROUTE_INIT_PORTS: `ollama=${closed},lmstudio=${closed},llamacpp=${closed},vllm=${closed}` });
    expect(init).toMatchObject({ code: 0 });
    expect((init as Ran).stdout).toContain('llm-route serve');
    expect((init as Ran).stdout).not.toContain('npx');

    const serve = await run('llm-route serve', 30_000);
    expect(serve).toMatchObject({ code: 1, stderr: `llm-route serve: ${IN_USE}\n` });

    // Claude Code is on the user's PATH, not the line's: exec says it cannot run it, like a shell, and stops its proxy.
    const exec = await run('llm-route exec -- claude', 30_000);
    expect(existsSync(join(usersBin, 'claude'))).toBe(true);
    expect((exec as Ran).stderr).not.toContain('waiting for a person');
    expect(exec).toMatchObject({ code: 127 });
    expect((exec as Ran).stderr).toContain('llm-route exec: cannot run claude');
    expect(leftovers()).toEqual([]);
  }, 400_000);
});

async function demoOnAnotherPort(): Promise<number> {
  const child = spawn('llm-route', ['demo', '--port', '0'], { cwd: clone, env: lineEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let requests = 0;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if ((JSON.parse(line) as { event?: string }).event === 'request') requests++;
  });
  const deadline = Date.now() + 30_000;
  while (requests < 1 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  child.kill('SIGINT');
  expect(await exited).toBe(0);
  return requests;
}
