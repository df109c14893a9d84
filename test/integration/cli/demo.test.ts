import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { processAlive } from '../../helpers/ports.js';

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([, ppid]) => ppid === pid)
    .map(([child]) => child);
}

describe('llm-route demo', () => {
  it('starts two mock upstreams and the proxy, routes traffic, and stops cleanly on SIGINT with no process left', async () => {
    const demo = spawn(process.execPath, ['bin/llm-route.js', 'demo', '--port', '0', '--no-ui'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
    const requests: Array<Record<string, unknown>> = [];
    createInterface({ input: demo.stdout }).on('line', (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (parsed.event === 'request') requests.push(parsed);
    });
    let stderr = '';
    demo.stderr.on('data', (d) => (stderr += String(d)));

    // Traffic flows: a few requests answered by one of the two tiers.
    await expect.poll(() => requests.length, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    expect(stderr).toMatch(/proxy on http:\/\/127\.0\.0\.1:\d+\/v1/);
    for (const r of requests) expect(['local', 'cloud']).toContain(r.tier);
    const mocks = childrenOf(demo.pid as number);
    expect(mocks.length).toBeGreaterThanOrEqual(2);

    demo.kill('SIGINT');
    expect(await exited).toBe(0);
    await expect.poll(() => mocks.filter(processAlive), { timeout: 5_000, interval: 100 }).toEqual([]);
  }, 30_000);

  it("keeps its traffic in a temporary usage database of its own, removed at exit, never in the user's state dir", async () => {
    const userState = mkdtempSync(join(tmpdir(), 'llm-route-user-state-'));
    const demoTmp = mkdtempSync(join(tmpdir(), 'llm-route-demo-tmp-'));
    try {
      const env = { ...process.env, XDG_STATE_HOME: userState, TMPDIR: demoTmp };
      const demo = spawn(process.execPath, ['bin/llm-route.js', 'demo', '--port', '0', '--no-ui'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
      let answered = 0;
      createInterface({ input: demo.stdout }).on('line', (line) => {
        if ((JSON.parse(line) as { event?: string }).event === 'request') answered++;
      });
      await expect.poll(() => answered, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(2);
      const own = readdirSync(demoTmp).filter((n) => n.startsWith('llm-route-demo-'));
      expect(own).toHaveLength(1);
      await expect.poll(() => existsSync(join(demoTmp, own[0], 'usage.db')), { timeout: 10_000, interval: 100 }).toBe(true);

      demo.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(readdirSync(userState)).toEqual([]);
      expect(readdirSync(demoTmp)).toEqual([]);
    } finally {
      rmSync(userState, { recursive: true, force: true });
      rmSync(demoTmp, { recursive: true, force: true });
    }
  }, 30_000);

  it("a reload (the UI's `r`; here POST /admin/reload) keeps the mock upstreams and the temporary usage database", async () => {
    const userState = mkdtempSync(join(tmpdir(), 'llm-route-user-state-'));
    const demoTmp = mkdtempSync(join(tmpdir(), 'llm-route-demo-tmp-'));
    try {
      const env = { ...process.env, XDG_STATE_HOME: userState, TMPDIR: demoTmp };
      const demo = spawn(process.execPath, ['bin/llm-route.js', 'demo', '--port', '0', '--no-ui'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
      const requests: Array<Record<string, unknown>> = [];
      createInterface({ input: demo.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (parsed.event === 'request') requests.push(parsed);
      });
      let stderr = '';
      demo.stderr.on('data', (d) => (stderr += String(d)));
      await expect.poll(() => /proxy on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stderr), { timeout: 15_000, interval: 100 }).not.toBeNull();
      const origin = /proxy on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(stderr)![1];
      await expect.poll(() => requests.length, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(1);

      const reload = await fetch(`${origin}/admin/reload`, { method: 'POST' });
      expect(reload.status).toBe(200);
      expect(await reload.json()).toMatchObject({ ok: true, file: expect.stringMatching(/examples[\\/]demo\.yaml$/) });
      const afterReload = requests.length;
      // Answered by the mocks as before: not sent to the file's own defaults (127.0.0.1:4101/4102), where nothing listens.
      await expect.poll(() => requests.length - afterReload, { timeout: 20_000, interval: 100 }).toBeGreaterThanOrEqual(3);
      for (const r of requests.slice(afterReload)) expect(r).toMatchObject({ status: 200, tier: expect.stringMatching(/^(local|cloud)$/) });

      demo.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(readdirSync(userState)).toEqual([]);
      expect(readdirSync(demoTmp)).toEqual([]);
    } finally {
      rmSync(userState, { recursive: true, force: true });
      rmSync(demoTmp, { recursive: true, force: true });
    }
  }, 45_000);
});
