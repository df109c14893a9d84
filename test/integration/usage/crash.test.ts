import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, runCli, type CliProcess } from '../../helpers/cli.js';
import { completion } from '../../helpers/fake-upstream.js';
import { sleep, useHarness } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';
import { readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
});
afterAll(() => cli?.remove());

async function serve(file: string): Promise<{ proc: CliProcess; url: string }> {
  const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', file], { LLM_ROUTE_CONFIG: undefined });
  h.defer(() => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  });
  const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
  return { proc, url: listening.url };
}

describe('a SIGKILL of llm-route serve under load', () => {
  it('loses at most the last second of rows; the file opens and the next serve writes to it', async () => {
    const fake = await h.fake();
    fake.always((ctx) => ctx.json(200, completion('ok', { prompt_tokens: 11, completion_tokens: 7 })));
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, configYaml({ tiers: [{ name: 'cloud', url: fake.url }], top: { usage: { path: './usage.db' } } }));

    const { proc, url } = await serve(file);
    const answered: Array<{ id: string; at: number }> = [];
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        try {
          const res = await fetch(`${url}/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
          });
          await res.arrayBuffer();
          if (res.status === 200) answered.push({ id: res.headers.get('x-request-id') as string, at: Date.now() });
        } catch {
          return; // the server is gone
        }
      }
    };
    const load = Array.from({ length: 8 }, worker);
    // Long enough that many rows are older than a second at the kill, however loaded the machine is.
    const started = Date.now();
    while (Date.now() - started < 2500 || answered.filter((a) => a.at < Date.now() - 1200).length < 100) await sleep(50);
    const killedAt = Date.now();
    proc.child.kill('SIGKILL');
    stop = true;
    await Promise.all(load);
    expect((await proc.exited).signal).toBe('SIGKILL');

    const check = new Database(db, { readonly: true, fileMustExist: true });
    expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    check.close();
    const stored = new Set(readRequests(db).map((r) => r.id as string));
    const older = answered.filter((a) => a.at < killedAt - 1000);
    expect(older.length).toBeGreaterThanOrEqual(100);
    const lost = older.filter((a) => !stored.has(a.id));
    expect(lost, `${lost.length} of ${older.length} rows older than 1 s lost`).toEqual([]);
    // What was lost at all is only the tail.
    const missing = answered.filter((a) => !stored.has(a.id));
    expect(missing.length).toBeLessThan(answered.length / 2);

    const again = await serve(file);
    const res = await fetch(`${again.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'after' }] }),
    });
    expect(res.status).toBe(200);
    const afterId = res.headers.get('x-request-id');
    await res.arrayBuffer();
    again.proc.child.kill('SIGTERM');
    expect(await again.proc.exited).toEqual({ code: 0, signal: null });
    expect(again.proc.lines.some((l) => l.includes('usage_degraded'))).toBe(false);
    expect(readRequests(db).some((r) => r.id === afterId)).toBe(true);
  }, 60_000);
});
