import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/cli.js';

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
  return out.trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number)).filter(([, ppid]) => ppid === pid).map(([child]) => child);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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
    await expect.poll(() => mocks.filter(alive), { timeout: 5_000, interval: 100 }).toEqual([]);
  }, 30_000);
});
