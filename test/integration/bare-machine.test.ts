import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';
import { REDIS_SKIP_NOTE, redisServerOnPath } from '../helpers/redis-available.js';

// A PATH holding only `node`: a machine with no redis-server (whatever this one has).
const bareBin = mkdtempSync(join(tmpdir(), 'llm-route-bare-bin-'));
symlinkSync(process.execPath, join(bareBin, 'node'));
afterAll(() => rmSync(bareBin, { recursive: true, force: true }));

/** `vitest run FILE` in a child, with the outer run's vitest variables removed. */
function vitest(file: string, extra: Record<string, string | undefined>): Promise<{ code: number | null; out: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'CI' && k !== 'NODE_OPTIONS') env[k] = v;
  Object.assign(env, { PATH: bareBin }, extra);
  const child = spawn(process.execPath, [join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run', file], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    const { code, out } = await vitest('test/integration/state-redis.test.ts', {});
    expect(out, out).toContain(REDIS_SKIP_NOTE);
    expect(out.split(REDIS_SKIP_NOTE).length - 1).toBe(1);
    expect(out).toMatch(/skipped/);
    expect(out).not.toMatch(/ENOENT/);
    expect(code, out).toBe(0);
  }, 120_000);

  it('with CI=true the Redis tests run, and a missing redis-server fails the run with a plain reason', async () => {
    const { code, out } = await vitest('test/integration/state-redis.test.ts', { CI: 'true' });
    expect(out).not.toContain(REDIS_SKIP_NOTE);
    expect(out).toContain('cannot start redis-server (ENOENT)');
    expect(code, out).not.toBe(0);
  }, 120_000);
});
