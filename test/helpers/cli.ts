import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureBuilt, repoRoot } from './build.js';

export { repoRoot } from './build.js';

let packedFiles: string[] | undefined;

/** The files `npm pack` puts in the package (package.json's `files`, README, package.json), as it lists them. */
function shippedFiles(): string[] {
  if (packedFiles) return packedFiles;
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' });
  if (pack.status !== 0) throw new Error(`npm pack --dry-run failed:\n${pack.stderr}`);
  packedFiles = (JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((file) => file.path);
  return packedFiles;
}

/**
 * The package as it ships, in a private directory: the files `npm pack` would publish from the
 * current build (so the bundle bin/llm-route.js runs, dist/bundle/, stand-ins and all), its
 * node_modules → the repo's, and `.bin/llm-route`, a symlink to the package's bin as npm links
 * it. `bin` is that symlink: runCli runs it as `llm-route` and `npx -- llm-route` do, through
 * its shebang. dist/ is built by the global setup when it is older than src/ (and here too, if not).
 */
export function buildPrivateCli(): { bin: string; dir: string; remove(): void } {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-cli-'));
  for (const file of shippedFiles()) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(dir, file));
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  mkdirSync(join(dir, '.bin'));
  symlinkSync('../bin/llm-route.js', join(dir, '.bin/llm-route'));
  return { bin: join(dir, '.bin/llm-route'), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line that satisfies `match`. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `bin` (buildPrivateCli's) as a shell runs `llm-route`: the file itself, its `#!/usr/bin/env node` finding this node first on PATH. */
export function runCli(bin: string, args: string[], env: Record<string, string | undefined> = {}, opts: { cwd?: string } = {}): CliProcess {
  const path = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  const child = spawn(bin, args, { cwd: opts.cwd ?? repoRoot, env: { ...process.env, PATH: path, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let err = '';
  const waiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    waitForLine(match, timeoutMs = 10_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching stdout line within ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${err}`)),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`process exited before a matching line; stdout:\n${lines.join('\n')}\nstderr:\n${err}`));
        });
      });
    },
  };
}

/**
 * `llm-route explain` on a tier file and a request body, each written to a file of its own in
 * the CLI's folder (`cli` is read at each call: test files build it in a beforeAll). A string
 * body is written as it is, to test what explain makes of bad JSON.
 */
export function explainRunner(cli: () => { bin: string; dir: string }, prefix: string) {
  let n = 0;
  return async (yamlText: string, body: unknown, args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> => {
    const { bin, dir } = cli();
    const file = join(dir, `${prefix}-${++n}.yaml`);
    const bodyFile = join(dir, `${prefix}-body-${n}.json`);
    writeFileSync(file, yamlText);
    writeFileSync(bodyFile, typeof body === 'string' ? body : JSON.stringify(body));
    const proc = runCli(bin, ['explain', bodyFile, '-c', file, ...args], { LLM_ROUTE_CONFIG: undefined });
    const { code } = await proc.exited;
    return { code, stdout: proc.lines.join('\n'), stderr: proc.stderr() };
  };
}
