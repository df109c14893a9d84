import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { configYaml } from '../../helpers/proxy.js';
import { finished, readRequests, useTempDirs } from '../../helpers/usage-kit.js';

const tempDir = useTempDirs();

/** A usage log on a real file with one day budget of 1,000 tokens on route:chat. */
function usageLog() {
  const db = join(tempDir(), 'usage.db');
  const yaml = configYaml({
    tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1', price: { input_per_mtok: 1, output_per_mtok: 2 } }],
    top: { usage: { path: db }, budgets: [{ scope: 'route:chat', per: 'day', tokens: 1000 }] },
  });
  const bus = new TelemetryBus();
  const log = new UsageLog(bus, loadConfigText(yaml, '/t/llm-route.yaml', {}));
  return { db, bus, log, ledger: log.budgets };
}

// The usage engine is loaded at first need (src/usage/engine-link.ts): what is asked in the
// log's first turn waits for it, and must be done in the order asked, as what is asked later.
describe('the usage engine, called', () => {
  it('calls asked before the engine has loaded are done in the order asked, and so are the ones after', async () => {
    const { db, bus, log, ledger } = usageLog();
    for (let i = 0; i < 3; i++) bus.emit(finished());
    // Same turn as the log's start: the engine is still being imported.
    const flushed = log.flush().then(() => readRequests(db).length);
    const first = ledger.reserve(['route:chat'], { tokens: 600, usd: 0 });
    const held = ledger.remaining('route:chat');
    const refused = ledger.reserve(['route:chat'], { tokens: 600, usd: 0 });
    expect(await flushed).toBe(3);
    const reservation = await first;
    expect(reservation.ok).toBe(true);
    expect(await held).toMatchObject([{ spent: 0, reserved: 600, remaining: 400 }]);
    expect(await refused).toMatchObject({ ok: false, scope: 'route:chat', remaining: 400 });

    // Loaded now: settle, then a reservation that fits only because the settle came first.
    const settled = ledger.settle((reservation as { id: string }).id, { tokens: 100, usd: 0 });
    const second = ledger.reserve(['route:chat'], { tokens: 900, usd: 0 });
    bus.emit(finished());
    const after = log.flush().then(() => readRequests(db).length);
    await settled;
    expect(await second).toMatchObject({ ok: true });
    expect(await ledger.remaining('route:chat')).toMatchObject([{ spent: 100, reserved: 900, remaining: 0 }]);
    expect(await after).toBe(4);
    await log.close();
  });

  it('a close asked in the first turn still writes the rows queued before it', async () => {
    const { db, bus, log } = usageLog();
    bus.emit(finished({ id: 'one' }));
    bus.emit(finished({ id: 'two' }));
    await log.close();
    expect(readRequests(db).map((row) => row.id)).toEqual(['one', 'two']);
  });

  it('once closed, nothing waits on the engine: a reservation is let through unbudgeted, a question is refused, a flush is a no-op', async () => {
    const { bus, log, ledger } = usageLog();
    await log.flush();
    await log.close();
    expect(await ledger.reserve(['route:chat'], { tokens: 5_000, usd: 0 })).toEqual({ ok: true, id: '' });
    await expect(ledger.settle('an-id', { tokens: 1, usd: 0 })).resolves.toBeUndefined();
    await expect(ledger.release('an-id')).resolves.toBeUndefined();
    await expect(ledger.remaining('route:chat')).rejects.toThrow('the usage log is closed');
    bus.emit(finished());
    await expect(log.flush()).resolves.toBeUndefined();
    expect(await log.dayTotals()).toBeNull();
  });
});
