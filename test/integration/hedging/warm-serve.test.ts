import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { pathOf } from '../../helpers/fit-servers.js';
import { useHarness, waitFor } from '../../helpers/harness.js';

/** `warm: true` through the real CLI: `serve` and `exec` ask Ollama to load the model at start. */

const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-warm-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function ollamaFake() {
  const fake = await h.fake();
  fake.always((ctx) => {
    const path = pathOf(ctx);
    // Ollama's answer to a load request (github.com/ollama/ollama/blob/main/docs/api.md, "Load a model"); anything else: an empty list.
    if (path === '/api/generate')
      return ctx.json(200, { model: 'qwen3:8b', created_at: '2026-12-03T13:40:00.000Z', response: '', done: true, done_reason: 'load' });
    return ctx.json(200, { models: [] });
  });
  return fake;
}

function tierFile(name: string, ollamaUrl: string, warm: boolean): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    stringify({
      version: 1,
      server: { port: 0 },
      providers: { ollama: { type: 'ollama', base_url: ollamaUrl.replace(/\/v1$/, ''), health: { warmup: false } } },
      routes: { chat: { tiers: [{ provider: 'ollama', model: 'qwen3:8b', warm, ollama: { keep_alive: '45m' } }] } },
    }),
  );
  return file;
}

const loads = (fake: Awaited<ReturnType<typeof ollamaFake>>) => fake.requests.filter((r) => r.url === '/api/generate').map((r) => r.body);

describe('warm: true at start', () => {
  it("serve sends Ollama's load request with the tier's keep_alive; without warm it sends none", async () => {
    const warm = await ollamaFake();
    const proc = runCli(cli.bin, ['serve', '--no-ui', '-c', tierFile('serve-warm', warm.url, true)], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => proc.child.exitCode === null && proc.child.kill('SIGKILL'));
    await proc.waitForLine((line) => line.includes('"event":"listening"'), 20_000);
    await waitFor(() => loads(warm).length === 1, 10_000, 'the load request');
    expect(loads(warm)).toEqual([{ model: 'qwen3:8b', keep_alive: '45m' }]);

    const cold = await ollamaFake();
    const plain = runCli(cli.bin, ['serve', '--no-ui', '-c', tierFile('serve-cold', cold.url, false)], { LLM_ROUTE_CONFIG: undefined });
    h.defer(() => plain.child.exitCode === null && plain.child.kill('SIGKILL'));
    await plain.waitForLine((line) => line.includes('"event":"listening"'), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(loads(cold)).toEqual([]);
  }, 60_000);

  it('exec sends it while the command starts', async () => {
    const warm = await ollamaFake();
    const run = runCli(cli.bin, ['exec', '-c', tierFile('exec-warm', warm.url, true), '--', process.execPath, '-e', 'setTimeout(() => {}, 1500)'], {
      LLM_ROUTE_CONFIG: undefined,
    });
    h.defer(() => run.child.exitCode === null && run.child.kill('SIGKILL'));
    await waitFor(() => loads(warm).length === 1, 10_000, 'the load request');
    expect(loads(warm)).toEqual([{ model: 'qwen3:8b', keep_alive: '45m' }]);
    expect((await run.exited).code).toBe(0);
  }, 60_000);
});
