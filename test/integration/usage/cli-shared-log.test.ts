import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { UsageLog } from '../../../src/usage/usage-log.js';
import { buildPrivateCli } from '../../helpers/cli.js';
import { configYaml } from '../../helpers/proxy.js';
import { finished, useTempDirs } from '../../helpers/usage-kit.js';

/**
 * One usage log, two tier files (the default log is one per user): `usage` on a new tier file
 * names the routes it shows that the file has not, so a newcomer knows whose numbers they are
 * (docs/usage.md, "llm-route usage").
 */
const tempDir = useTempDirs();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
});
afterAll(() => cli?.remove());

function usage(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const out = spawnSync(process.execPath, [cli.bin, 'usage', ...args], { encoding: 'utf8' });
  return { code: out.status, stdout: out.stdout, stderr: out.stderr };
}

/** A tier file of one route, `chat`, whose usage log holds one request of each of `routes`. */
async function tierFileOverLog(routes: string[]): Promise<string> {
  const dir = tempDir();
  const file = join(dir, 'llm-route.yaml');
  writeFileSync(file, configYaml({ tiers: [{ name: 'cloud', url: 'http://127.0.0.1:9/v1' }], top: { usage: { path: './usage.db' } } }));
  const bus = new TelemetryBus();
  const log = new UsageLog(bus, loadConfig(file));
  for (const route of routes) bus.emit(finished({ route, startedAt: Date.now() - 60_000, usage: { prompt_tokens: 10, completion_tokens: 5 } }));
  await log.close();
  return file;
}

describe('llm-route usage on a log other tier files write to', () => {
  it('names the routes this tier file has not, under the table and in --json', async () => {
    const file = await tierFileOverLog(['chat', 'claude', 'code']);
    const text = usage(['-c', file]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `not routes of ${file}: claude, code (another tier file writes to this usage log; usage.path gives a tier file a log of its own)`,
    );
    const json = JSON.parse(usage(['-c', file, '--json']).stdout);
    expect(json.not_in_tier_file).toEqual(['claude', 'code']);
    // Grouped otherwise, rows are not a route's: nothing to say.
    expect(usage(['-c', file, '--by', 'tier']).stdout).not.toContain('not routes of');
  });

  it("says nothing when every route shown is the tier file's own", async () => {
    const file = await tierFileOverLog(['chat']);
    expect(usage(['-c', file]).stdout).not.toContain('not routes of');
    expect(Object.keys(JSON.parse(usage(['-c', file, '--json']).stdout))).toEqual(['since', 'until', 'by', 'groups', 'totals']);
  });
});
