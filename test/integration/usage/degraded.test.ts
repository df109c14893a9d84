import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { TelemetryEvent } from '../../../src/telemetry/events.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { completion } from '../../helpers/fake-upstream.js';
import { sleep, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml } from '../../helpers/proxy.js';
import { finished, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const h = useHarness();
const tempDir = useTempDirs();

const usageLines = (logs: Array<Record<string, unknown>>, event: string): Array<Record<string, unknown>> => logs.filter((l) => l.event === event);

async function servingProxy(db: string) {
  const fake = await h.fake();
  fake.always((ctx) => ctx.json(200, completion('ok')));
  return h.proxy({ tiers: [{ name: 'cloud', url: fake.url }], top: { usage: { path: db } } }, { usage: { retryBaseMs: 40, retryMaxMs: 80 } });
}

describe('an unusable usage database never stops the proxy', () => {
  it('a corrupt file: every request is answered, usage_degraded is logged once across retries, and rows return when the file is fixed', async () => {
    const db = join(tempDir(), 'usage.db');
    writeFileSync(db, 'this is not a SQLite database, just text that happens to be here. '.repeat(200));
    const proxy = await servingProxy(db);
    for (let i = 0; i < 3; i++) expect((await chat(proxy, {})).status).toBe(200);
    await proxy.server.usage.flush();
    await sleep(400); // several reopen attempts at 40-80 ms
    const degraded = usageLines(proxy.logs, 'usage_degraded');
    expect(degraded).toHaveLength(1);
    expect(degraded[0]).toMatchObject({ path: db });
    expect(String(degraded[0].error)).toMatch(/^corrupt .*SQLITE_NOTADB/);
    expect(proxy.server.usage.degraded).toMatch(/corrupt/);

    rmSync(db); // the operator moves the broken file away
    const recovered = await waitFor(() => usageLines(proxy.logs, 'usage_recovered')[0], 3000, 'usage_recovered');
    expect(recovered).toMatchObject({ path: db, dropped: 3 });
    expect(proxy.server.usage.degraded).toBeNull();
    expect((await chat(proxy, {})).status).toBe(200);
    await proxy.server.usage.flush();
    expect(readRequests(db)).toHaveLength(1);
    expect(usageLines(proxy.logs, 'usage_degraded')).toHaveLength(1);
  });

  it('a corrupt file is reported soon after start even when no request comes (the engine loads after start, not on first use only)', async () => {
    const db = join(tempDir(), 'usage.db');
    writeFileSync(db, 'this is not a SQLite database either. '.repeat(200));
    const proxy = await servingProxy(db);
    const degraded = await waitFor(() => usageLines(proxy.logs, 'usage_degraded')[0], 5000, 'usage_degraded with no traffic');
    expect(String(degraded.error)).toMatch(/^corrupt .*SQLITE_NOTADB/);
    expect(proxy.server.usage.degraded).toMatch(/corrupt/);
  });

  it('an unwritable path (its folder is a file): requests are answered, reported once', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'not-a-dir'), 'x');
    const db = join(dir, 'not-a-dir', 'usage.db');
    const proxy = await servingProxy(db);
    for (let i = 0; i < 3; i++) expect((await chat(proxy, {})).status).toBe(200);
    await proxy.server.usage.flush();
    await sleep(300);
    const degraded = usageLines(proxy.logs, 'usage_degraded');
    expect(degraded).toHaveLength(1);
    expect(String(degraded[0].error)).toMatch(/^not writable: .*(ENOTDIR|EEXIST|SQLITE_CANTOPEN)/);
  });

  it('a full database: the batch that does not fit is dropped and counted, reported once', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(
      configYaml({ tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1' }], top: { usage: { path: db } } }),
      '/t/llm-route.yaml',
      {},
    );
    const bus = new TelemetryBus();
    const events: TelemetryEvent[] = [];
    bus.subscribe((e) => events.push(e));
    // 16 pages of 4 KiB: the schema fits, a few hundred rows do not.
    const log = new UsageLog(bus, config, { maxPageCount: 16, retryBaseMs: 10_000 });
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 300; i++) bus.emit(finished({ id: `request-${batch}-${i}-${'x'.repeat(60)}` }));
      await log.flush();
    }
    const degraded = events.filter((e) => e.type === 'usage_degraded');
    expect(degraded).toHaveLength(1);
    expect(degraded[0]).toMatchObject({ error: expect.stringMatching(/^full: .*SQLITE_FULL/) });
    await log.close();
    // Nothing half-written: each transaction (100 rows, CHUNK in src/usage/usage-engine.ts) went in whole or not at all.
    expect(readRequests(db).length % 100).toBe(0);
  });

  it('a database locked by another process: degraded while the lock is held, recovered after it is released', async () => {
    const db = join(tempDir(), 'usage.db');
    const config = loadConfigText(
      configYaml({ tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1' }], top: { usage: { path: db } } }),
      '/t/llm-route.yaml',
      {},
    );
    const bus = new TelemetryBus();
    const events: TelemetryEvent[] = [];
    bus.subscribe((e) => events.push(e));
    const log = new UsageLog(bus, config, { busyTimeoutMs: 50, retryBaseMs: 50, retryMaxMs: 100 });
    await log.flush();

    const other = new Database(db);
    other.pragma('journal_mode = WAL');
    other.exec('BEGIN EXCLUSIVE');
    bus.emit(finished({ id: 'while-locked' }));
    await log.flush();
    expect(events.filter((e) => e.type === 'usage_degraded')).toMatchObject([{ error: expect.stringMatching(/^locked by another process: .*SQLITE_BUSY/) }]);
    other.exec('COMMIT');
    other.close();

    await waitFor(() => events.some((e) => e.type === 'usage_recovered'), 3000, 'usage_recovered');
    expect(events.find((e) => e.type === 'usage_recovered')).toMatchObject({ dropped: 1 });
    bus.emit(finished({ id: 'after' }));
    await log.close();
    expect(readRequests(db).map((r) => r.id)).toEqual(['after']);
  });
});
