import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureBuilt, repoRoot } from './build.js';

export { repoRoot } from './build.js';

/**
 * A private directory laid out like the package (bin/, dist/, package.json, node_modules →
 * the repo's) with a copy of the current build, for a test that keeps files beside the CLI.
 * dist/ is built by the global setup when it is older than src/ (and here too, if not).
 */
export function buildPrivateCli(): { bin: string; dir: string; remove(): void } {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-cli-'));
  cpSync(join(repoRoot, 'dist'), join(dir, 'dist'), { recursive: true });
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(repoRoot, 'bin/llm-route.js'), join(dir, 'bin/llm-route.js'));
  copyFileSync(join(repoRoot, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { bin: join(dir, 'bin/llm-route.js'), dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
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

export function runCli(bin: string, args: string[], env: Record<string, string | undefined> = {}): CliProcess {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    lines,
    stderr: () => err,
    exited,
    waitForLine(match, timeoutMs = 10_000) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching stdout line within ${timeoutMs} ms; stdout:\n${lines.join('\n')}\nstderr:\n${err}`)), timeoutMs);
        waiters.push({ match, resolve: (line) => { clearTimeout(timer); resolve(line); } });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`process exited before a matching line; stdout:\n${lines.join('\n')}\nstderr:\n${err}`));
        });
      });
    },
  };
}
