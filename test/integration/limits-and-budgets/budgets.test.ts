import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { Metrics } from '../../../src/telemetry/metrics.js';
import { budgetWindow } from '../../../src/usage/budgets/windows.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { buildPrivateCli } from '../../helpers/cli.js';
import { configYaml } from '../../helpers/proxy.js';
import { useTempDirs } from '../../helpers/usage-kit.js';

const tempDir = useTempDirs();

function tierFile(db: string, budgets: Array<Record<string, unknown>>): string {
  return configYaml({
    tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1', price: { input_per_mtok: 1, output_per_mtok: 2 } }],
    top: { usage: { path: db }, budgets },
  });
}

function ledgerAt(db: string, budgets: Array<Record<string, unknown>>, now: () => number = Date.now, extra: Record<string, unknown> = {}) {
  const config = loadConfigText(tierFile(db, budgets), '/t/llm-route.yaml', {});
  const bus = new TelemetryBus();
  const metrics = new Metrics(bus, config);
  const log = new UsageLog(bus, config, { now, registry: metrics.registry, ...extra });
  return { log, ledger: log.budgets, metrics };
}

describe('the budgets ledger', () => {
  it('reserves the worst case, settles to the actual, releases on failure; refuses with retry-after at the window end', async () => {
    const db = join(tempDir(), 'usage.db');
    const now = Date.UTC(2025, 0, 31, 22, 0, 0); // two hours before UTC midnight, one day before the 1st
    const { log, ledger, metrics } = ledgerAt(
      db,
      [
        { scope: 'route:chat', per: 'day', tokens: 1000 },
        { scope: 'provider:p_cloud', per: 'month', usd: 0.01 },
      ],
      () => now,
    );

    const a = await ledger.reserve(['route:chat', 'provider:p_cloud'], { tokens: 600, usd: 0.004 });
    expect(a.ok).toBe(true);
    // 600 + 600 > 1000: refused on the route's day budget; retry when the day ends.
    const refused = await ledger.reserve(['route:chat', 'provider:p_cloud'], { tokens: 600, usd: 0.004 });
    expect(refused).toEqual({ ok: false, scope: 'route:chat', unit: 'tokens', per: 'day', remaining: 400, retryAfterMs: 2 * 3_600_000 });
    // All or nothing: the provider budget was not touched by the refused reservation.
    expect(await ledger.remaining('provider:p_cloud')).toMatchObject([{ reserved: 0.004, spent: 0, remaining: 0.006 }]);

    await ledger.settle((a as { id: string }).id, { tokens: 250, usd: 0.001 });
    expect(await ledger.remaining('route:chat')).toEqual([
      { scope: 'route:chat', per: 'day', unit: 'tokens', limit: 1000, spent: 250, reserved: 0, remaining: 750, resetsAt: Date.UTC(2025, 1, 1) },
    ]);
    const b = await ledger.reserve(['route:chat'], { tokens: 700, usd: 0 });
    expect(b.ok).toBe(true);
    await ledger.release((b as { id: string }).id);
    expect(await ledger.remaining('route:chat')).toMatchObject([{ spent: 250, reserved: 0, remaining: 750 }]);

    // The provider's month budget: the window ends on the 1st.
    const c = await ledger.reserve(['provider:p_cloud'], { tokens: 0, usd: 0.0095 });
    expect(c).toMatchObject({ ok: false, scope: 'provider:p_cloud', unit: 'usd', per: 'month', retryAfterMs: Date.UTC(2025, 1, 1) - now });
    // Scopes without a budget are free.
    expect(await ledger.reserve(['route:other'], { tokens: 1e9, usd: 1e9 })).toEqual({ ok: true, id: '' });

    const text = await metrics.registry.metrics();
    expect(text).toContain('llm_budget_remaining{scope="route:chat",unit="tokens"} 750');
    expect(text).toContain('llm_budget_remaining{scope="provider:p_cloud",unit="usd"} 0.009');
    await log.close();
  });

  it('a new window starts empty; holds never settled (a dead process) are given back after they expire', async () => {
    const db = join(tempDir(), 'usage.db');
    let now = Date.UTC(2025, 5, 10, 23, 59, 0);
    const { log, ledger } = ledgerAt(db, [{ scope: 'route:chat', per: 'day', tokens: 100 }], () => now, { holdMs: 60_000 });
    expect((await ledger.reserve(['route:chat'], { tokens: 100, usd: 0 })).ok).toBe(true);
    expect((await ledger.reserve(['route:chat'], { tokens: 1, usd: 0 })).ok).toBe(false);
    now += 120_000; // past midnight: the 11th's window
    expect(budgetWindow('day', now).start).toBe(Date.UTC(2025, 5, 11));
    expect((await ledger.reserve(['route:chat'], { tokens: 100, usd: 0 })).ok).toBe(true);
    now += 30_000;
    expect((await ledger.reserve(['route:chat'], { tokens: 1, usd: 0 })).ok).toBe(false);
    now += 31_000; // the unsettled hold expired
    expect((await ledger.reserve(['route:chat'], { tokens: 100, usd: 0 })).ok).toBe(true);
    await log.close();
  });

  it("with the database unusable, budgets are enforced on this process's counters, which move to the file when it is back", async () => {
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    writeFileSync(db, 'not a database '.repeat(500));
    const { log, ledger } = ledgerAt(db, [{ scope: 'route:chat', per: 'day', tokens: 100 }], Date.now, { retryBaseMs: 50, retryMaxMs: 50 });
    const held = await ledger.reserve(['route:chat'], { tokens: 60, usd: 0 });
    expect(held.ok).toBe(true);
    expect((await ledger.reserve(['route:chat'], { tokens: 60, usd: 0 })).ok).toBe(false);
    await ledger.settle((held as { id: string }).id, { tokens: 30, usd: 0 });
    const { rmSync } = await import('node:fs');
    rmSync(db);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await log.flush();
    expect(log.degraded).toBeNull();
    expect(await ledger.remaining('route:chat')).toMatchObject([{ spent: 30, remaining: 70 }]);
    await log.close();
    const file = new Database(db, { readonly: true });
    expect(file.prepare('SELECT spent FROM budget_windows').all()).toEqual([{ spent: 30 }]);
    file.close();
  });
});

describe('the ledger across processes', () => {
  let cli: ReturnType<typeof buildPrivateCli>;
  beforeAll(() => {
    cli = buildPrivateCli();
  });
  afterAll(() => cli?.remove());

  it('four processes racing for one small budget never spend past it', async () => {
    const dir = tempDir();
    const db = join(dir, 'usage.db');
    const file = join(dir, 'llm-route.yaml');
    writeFileSync(file, tierFile(db, [{ scope: 'route:chat', per: 'day', tokens: 500 }]));
    const script = join(dir, 'racer.mjs');
    // Each racer: its own UsageLog (its own process and SQLite connection), 40 reservations of 10 tokens at once.
    writeFileSync(
      script,
      `
      import { loadConfig } from ${JSON.stringify(join(cli.dir, 'dist/config/load.js'))};
      import { TelemetryBus } from ${JSON.stringify(join(cli.dir, 'dist/telemetry/bus.js'))};
      import { UsageLog } from ${JSON.stringify(join(cli.dir, 'dist/usage/usage-log.js'))};
      const log = new UsageLog(new TelemetryBus(), loadConfig(process.argv[2]));
      await log.flush();
      const start = Number(process.argv[3]);
      while (Date.now() < start) await new Promise((r) => setTimeout(r, 1));
      const results = await Promise.all(Array.from({ length: 40 }, async () => {
        const r = await log.budgets.reserve(['route:chat'], { tokens: 10, usd: 0 });
        if (!r.ok) return 0;
        await new Promise((res) => setTimeout(res, Math.random() * 5));
        await log.budgets.settle(r.id, { tokens: 10, usd: 0 });
        return 1;
      }));
      await log.close();
      process.stdout.write(String(results.reduce((a, b) => a + b, 0)));
    `,
    );
    const start = Date.now() + 1500;
    const racers = Array.from(
      { length: 4 },
      () =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const child = spawn(process.execPath, [script, file, String(start)], { stdio: ['ignore', 'pipe', 'pipe'] });
          let out = '';
          let err = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (err += d));
          child.once('exit', (code) => resolve({ code, out, err }));
        }),
    );
    const results = await Promise.all(racers);
    for (const r of results) expect(r, r.err).toMatchObject({ code: 0 });
    const granted = results.map((r) => Number(r.out));
    // 160 tries, room for exactly 50: every process got some, together exactly the budget.
    expect(granted.reduce((a, b) => a + b, 0)).toBe(50);
    const check = new Database(db, { readonly: true });
    expect(check.prepare('SELECT spent, reserved FROM budget_windows').all()).toEqual([{ spent: 500, reserved: 0 }]);
    expect(check.prepare('SELECT count(*) AS n FROM budget_holds').get()).toEqual({ n: 0 });
    check.close();
  }, 60_000);
});
