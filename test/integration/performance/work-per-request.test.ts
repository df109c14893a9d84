import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { completion, healthyStream } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';

/*
 * The work `serve` does per request, counted, not timed: JSON.parse and JSON.stringify calls
 * and setTimeout timers armed, in the real CLI's process (a preload counts them; SIGUSR2 prints the counts),
 * over 100 requests after a warm-up. Counts do not flake with the machine's load, so this runs
 * in CI and fails when a change quietly adds a parse or a timer to every request of the hot
 * paths (docs/performance.md). The bounds are today's counts: lower them when you win some back.
 */

const h = useHarness();
const dir = mkdtempSync(join(tmpdir(), 'llm-route-work-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  join(dir, 'count.cjs'),
  `const counts = { parse: 0, stringify: 0, timers: 0 };
const { parse, stringify } = JSON;
JSON.parse = function () { counts.parse++; return parse.apply(this, arguments); };
JSON.stringify = function () { counts.stringify++; return stringify.apply(this, arguments); };
const timeout = global.setTimeout;
global.setTimeout = function () { counts.timers++; return timeout.apply(this, arguments); };
process.on('SIGUSR2', () => process.stderr.write('COUNTS ' + stringify(counts) + '\\n'));
`,
);

interface Counts {
  parse: number;
  stringify: number;
  timers: number;
}

const ROUNDS = 100;

/** The counts per request over ROUNDS requests `ask` makes of a `serve` whose one tier is `upstream`, after 20 to warm up. */
async function workPerRequest(upstreamUrl: string, ask: (url: string) => Promise<void>): Promise<Counts> {
  const file = join(dir, `tiers-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    file,
    `version: 1\nserver: { port: 0 }\nusage: { path: ${join(dir, `${Math.random().toString(36).slice(2)}.db`)} }\nproviders:\n  local: { type: openai, base_url: "${upstreamUrl}", health: { warmup: false } }\nroutes:\n  chat:\n    tiers: [{ provider: local, model: m }]\n`,
  );
  const child = spawn(process.execPath, ['--require', join(dir, 'count.cjs'), 'bin/llm-route.js', 'serve', '-c', file, '--no-ui'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.once('close', resolve));
  h.defer(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const said: Counts[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    if (line.startsWith('COUNTS ')) said.push(JSON.parse(line.slice(7)) as Counts);
  });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"listening"')) resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(() => reject(new Error('serve exited before it listened')));
  });
  const snapshot = async (): Promise<Counts> => {
    const before = said.length;
    child.kill('SIGUSR2');
    return waitFor(() => said[before], 5000, 'the counts');
  };
  for (let i = 0; i < 20; i++) await ask(url);
  const start = await snapshot();
  for (let i = 0; i < ROUNDS; i++) await ask(url);
  const end = await snapshot();
  return {
    parse: (end.parse - start.parse) / ROUNDS,
    stringify: (end.stringify - start.stringify) / ROUNDS,
    timers: (end.timers - start.timers) / ROUNDS,
  };
}

async function post(url: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('work per request on the hot paths (counted, not timed)', () => {
  it('a relayed whole Chat answer: its request parsed once and of its answer only the usage object, its body written once for the tier and its log line once, three timers', async () => {
    const upstream = await h.fake();
    upstream.always((ctx) => ctx.json(200, completion('ok')));
    const work = await workPerRequest(upstream.url, (url) => post(url, { model: 'chat', messages: [{ role: 'user', content: 'hi' }] }));
    expectAtMost(work, { parse: 2, stringify: 2, timers: 3 });
  });

  it('a relayed Chat stream of three words: each of its five events parsed once, five timers', async () => {
    const upstream = await h.fake();
    upstream.always(healthyStream(['one', ' two', ' three']));
    const work = await workPerRequest(upstream.url, (url) => post(url, { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    expectAtMost(work, { parse: 7, stringify: 2, timers: 5 });
  });
});

/**
 * Each count at most its bound. Parses and serializations are exact; a timer of the process's
 * own (a flush of the usage log, a pool's idle check) may fall inside the counted requests,
 * hence a fifth of a timer a request of slack.
 */
function expectAtMost(work: Counts, bounds: Counts): void {
  // A request parses its body and arms its timers at least: counts of 0 would mean the preload stopped counting.
  expect(work.parse, 'JSON.parse calls a request').toBeGreaterThanOrEqual(1);
  expect(work.timers, 'timers armed a request').toBeGreaterThanOrEqual(1);
  expect(work.parse, 'JSON.parse calls a request').toBeLessThanOrEqual(bounds.parse);
  expect(work.stringify, 'JSON.stringify calls a request').toBeLessThanOrEqual(bounds.stringify);
  expect(work.timers, 'timers armed a request').toBeLessThanOrEqual(bounds.timers + 0.2);
}
