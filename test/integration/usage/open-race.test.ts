import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli } from '../../helpers/cli.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

const tempDir = useTempDirs();

describe('opening one new usage database from several processes at once', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  });
  afterAll(() => cli?.remove());

  it('migrates it once: no process fails with "table already exists" (and so none falls back to its own budget counters)', async () => {
    const db = join(tempDir(), 'usage.db');
    const start = Date.now() + 1000;
    const code = `import { UsageStore } from ${JSON.stringify(join(cli.dir, 'dist/usage/store.js'))};
      while (Date.now() < ${start}) {}
      try { new UsageStore(${JSON.stringify(db)}).db.close(); process.stdout.write('ok'); } catch (e) { process.stdout.write('FAIL ' + e.message); }`;
    const outcomes = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
            let out = '';
            child.stdout.on('data', (d) => (out += d));
            child.once('exit', () => resolve(out));
          }),
      ),
    );
    expect(outcomes).toEqual(Array.from({ length: 8 }, () => 'ok'));
  }, 30_000);
});
