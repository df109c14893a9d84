import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { realLlamaSkipNote } from '../../helpers/real-llama.js';
import { REDIS_SKIP_NOTE, redisServerOnPath } from '../../helpers/redis-available.js';

// A PATH holding only `node`: a machine with no redis-server (whatever this one has).
const bareBin = mkdtempSync(join(tmpdir(), 'llm-route-bare-bin-'));
symlinkSync(process.execPath, join(bareBin, 'node'));
afterAll(() => rmSync(bareBin, { recursive: true, force: true }));

/** `vitest run FILES` in a child, with the outer run's vitest variables removed. */
function vitest(files: string[], extra: Record<string, string | undefined>): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'CI' && k !== 'NODE_OPTIONS') env[k] = v;
  Object.assign(env, { PATH: bareBin }, extra);
  const child = spawn(process.execPath, [join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run', ...files], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (out += String(d)));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('npm test on a machine without redis-server', () => {
  it('the bare PATH really has no redis-server', () => {
    expect(redisServerOnPath(bareBin)).toBe(false);
  });

  it('passes with the Redis tests skipped, saying so once and how to run them', async () => {
    const { code, out } = await vitest(['test/integration/shared-state/redis.test.ts'], {});
    expect(out, out).toContain(REDIS_SKIP_NOTE);
    expect(out.split(REDIS_SKIP_NOTE).length - 1).toBe(1);
    expect(out).toMatch(/skipped/);
    expect(out).not.toMatch(/ENOENT/);
    expect(code, out).toBe(0);
  }, 120_000);

  it("the run's last line says how many Redis tests were skipped and why; they stay registered, so the count does not change", async () => {
    const files = ['test/integration/shared-state/idempotency.test.ts', 'test/integration/shared-state/redis.test.ts'];
    const bare = await vitest(files, {});
    expect(bare.code, bare.out).toBe(0);
    const totals = testTotals(bare.out);
    expect(totals.skipped).toBeGreaterThan(0);
    const lastLine = bare.out.trimEnd().split('\n').at(-1);
    expect(lastLine).toBe(`${totals.skipped} ${REDIS_SKIP_NOTE}`);
    // The same tests with redis-server: the Redis ones run instead of being skipped.
    if (redisServerOnPath()) {
      const withRedis = await vitest(files, { PATH: process.env.PATH });
      expect(withRedis.code, withRedis.out).toBe(0);
      expect(testTotals(withRedis.out)).toEqual({ passed: totals.passed + totals.skipped, skipped: 0, total: totals.total });
      expect(withRedis.out).not.toContain(REDIS_SKIP_NOTE);
    }
  }, 180_000);

  it('with CI=true the Redis tests run, and a missing redis-server fails the run with a plain reason', async () => {
    const { code, out } = await vitest(['test/integration/shared-state/redis.test.ts'], { CI: 'true' });
    expect(out).not.toContain(REDIS_SKIP_NOTE);
    expect(out).toContain('cannot start redis-server (ENOENT)');
    expect(code, out).not.toBe(0);
  }, 120_000);
});

describe('npm test on a machine without a llama-server build', () => {
  it("skips the real-llama tests, and the run's last line says how many, why, and the script that builds one", async () => {
    const noBuild = mkdtempSync(join(tmpdir(), 'llm-route-no-llama-'));
    try {
      const { code, out } = await vitest(['test/integration/fit/real-llama.test.ts', 'test/integration/hedging/real-llama.test.ts'], { LLAMA_DIR: noBuild });
      expect(code, out).toBe(0);
      const totals = testTotals(out);
      expect(totals).toEqual({ passed: 0, skipped: 3, total: 3 });
      expect(out.trimEnd().split('\n').at(-1)).toBe(`3 ${realLlamaSkipNote(noBuild)}`);
      expect(realLlamaSkipNote(noBuild)).toContain('scripts/real-llama/build.sh');
    } finally {
      rmSync(noBuild, { recursive: true, force: true });
    }
  }, 120_000);
});

/** vitest's "Tests  9 passed | 14 skipped (23)" line, as numbers. */
function testTotals(out: string): { passed: number; skipped: number; total: number } {
  const line =
    out
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the ANSI colour codes stripped here.
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .find((l) => /^\s*Tests\s/.test(l)) ?? '';
  const count = (word: string): number => Number(new RegExp(`(\\d+) ${word}`).exec(line)?.[1] ?? 0);
  return { passed: count('passed'), skipped: count('skipped'), total: Number(/\((\d+)\)/.exec(line)?.[1] ?? -1) };
}
