import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TierResult } from '../../../src/bench-command/aggregate.js';
import { loadConfig } from '../../../src/config/load.js';
import { parseMockOptions } from '../../../src/mock/options.js';
import { startMock } from '../../../src/mock/server.js';
import { ProxyServer } from '../../../src/server/server.js';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { FakeUpstream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { FakeLlamaServer } from '../../helpers/fake-llama-server.js';

/** The real `llm-route bench`, compiled from the current sources, against in-process upstreams. */

interface TierSpec {
  name: string;
  url: string;
  model?: string;
}

interface BenchRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const DEAD_URL = 'http://127.0.0.1:1/v1';

let cli: ReturnType<typeof buildPrivateCli>;
let dir: string;
let files = 0;
const h = useHarness();

beforeAll(() => {
  cli = buildPrivateCli();
  dir = mkdtempSync(join(tmpdir(), 'llm-route-bench-'));
}, 60_000);

afterAll(() => {
  cli?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A tier file with one provider per tier; `routes` maps route names to their tiers. */
function writeConfig(routes: Record<string, TierSpec[]>, extra = ''): string {
  const tiers = Object.values(routes).flat();
  const providers = tiers.map((tier) => `  ${tier.name}:\n    type: openai\n    base_url: ${tier.url}\n`).join('');
  const routeText = Object.entries(routes)
    .map(
      ([route, list]) =>
        `  ${route}:\n    tiers:\n${list.map((tier) => `      - name: ${tier.name}\n        provider: ${tier.name}\n        model: ${tier.model ?? `${tier.name}-model`}\n`).join('')}`,
    )
    .join('');
  const file = join(dir, `bench-${++files}.yaml`);
  writeFileSync(file, `version: 1\n${extra}providers:\n${providers}routes:\n${routeText}`);
  return file;
}

async function mock(raw: Record<string, unknown>): Promise<string> {
  const server = await startMock(parseMockOptions(raw));
  h.defer(() => server.close());
  return server.url;
}

async function fake(): Promise<FakeUpstream> {
  const upstream = await FakeUpstream.start();
  h.defer(() => upstream.close());
  return upstream;
}

async function bench(args: string[]): Promise<BenchRun> {
  const proc = runCli(cli.bin, ['bench', ...args], { LLM_ROUTE_CONFIG: undefined });
  const { code } = await proc.exited;
  return { code, stdout: proc.lines.join('\n'), stderr: proc.stderr() };
}

function tiersOf(run: BenchRun): TierResult[] {
  return (JSON.parse(run.stdout) as { tiers: TierResult[] }).tiers;
}

describe('llm-route bench', () => {
  it('measures a mock with --ttft-ms 300: exit 0, TTFT p50 within 20% of 300 ms', async () => {
    const url = await mock({ ttftMs: '300', name: 'm' });
    const file = writeConfig({ chat: [{ name: 'local', url, model: 'qwen2.5:7b' }] });

    const run = await bench(['-c', file, '-n', '10', '--concurrency', '2', '--json']);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(''); // no progress bar when stderr is not a terminal
    const [tier] = tiersOf(run);
    expect(tier).toMatchObject({ route: 'chat', tier: 'local', provider: 'local', model: 'qwen2.5:7b', requests: 10, errors: 0, error_samples: [] });
    expect(tier.ttft_ms.p50).toBeGreaterThanOrEqual(240);
    expect(tier.ttft_ms.p50).toBeLessThanOrEqual(360);
    const { min, p50, p95, p99, max } = tier.ttft_ms;
    expect([min, p50, p95, p99, max]).toEqual([...[min, p50, p95, p99, max]].sort((a, b) => (a as number) - (b as number)));
    expect(tier.total_ms.p50).toBeGreaterThanOrEqual(tier.ttft_ms.p50 as number);
    expect(tier.tokens_per_s).toBeGreaterThan(0);
    expect(tier.histogram.length).toBeGreaterThanOrEqual(1);
    expect(tier.histogram.length).toBeLessThanOrEqual(8);
    expect(tier.histogram.reduce((sum, bucket) => sum + bucket.count, 0)).toBe(10);
    expect(tier.histogram[0].from_ms).toBe(min);
    expect(tier.histogram.at(-1)?.to_ms).toBe(max);
  });

  it('exits 1 when every request of a tier fails, counting the errors, and still reports the healthy tier', async () => {
    const url = await mock({ ttftMs: '20', name: 'ok' });
    const file = writeConfig({
      chat: [
        { name: 'local', url },
        { name: 'dead', url: DEAD_URL },
      ],
    });

    const run = await bench(['-c', file, '-n', '3', '--json']);

    expect(run.code, run.stderr).toBe(1);
    const [local, dead] = tiersOf(run);
    expect(local).toMatchObject({ tier: 'local', requests: 3, errors: 0 });
    expect(dead).toMatchObject({ tier: 'dead', requests: 3, errors: 3, tokens_per_s: null, histogram: [] });
    expect(dead.ttft_ms.p50).toBeNull();
    expect(dead.error_samples).toEqual([expect.objectContaining({ reason: 'connection_refused', status: null, count: 3 })]);
  });

  it('takes completion tokens from the usage chunk when present, else counts content events', async () => {
    // Usage says 42 while only 3 content events arrive: the count shows which source was used.
    const withUsage = await fake();
    withUsage.always(async (ctx) => {
      ctx.startStream();
      ctx.role();
      for (const word of ['a', ' b', ' c']) ctx.content(word);
      ctx.finish();
      if ((ctx.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) ctx.usage(7, 42);
      ctx.done();
    });
    const withoutUsage = await fake();
    withoutUsage.always(async (ctx) => {
      ctx.startStream();
      for (const word of ['x', ' y', ' z', ' w']) ctx.content(word);
      ctx.finish();
      ctx.done();
    });
    const file = writeConfig({ a: [{ name: 'usage', url: withUsage.url }], b: [{ name: 'counted', url: withoutUsage.url }] });

    const run = await bench(['-c', file, '-n', '2', '--prompt', 'hi there', '--max-tokens', '16', '--json']);

    expect(run.code, run.stderr).toBe(0);
    const [usage, counted] = tiersOf(run);
    expect(usage).toMatchObject({ tier: 'usage', output_tokens: 42, token_source: 'usage' });
    expect(counted).toMatchObject({ tier: 'counted', output_tokens: 4, token_source: 'counted' });
    expect(withUsage.requests[0].body).toMatchObject({
      model: 'usage-model',
      stream: true,
      max_tokens: 16,
      stream_options: { include_usage: true },
    });
    expect((withUsage.requests[0].body.messages as Array<{ content: string }>)[0].content).toMatch(/^\[[0-9a-f]{8}\] hi there$/);
  });

  it('sends a unique prompt per request, nonce first; --same-prompt sends it as given', async () => {
    const upstream = await fake();
    upstream.always(async (ctx) => {
      ctx.startStream();
      ctx.content('x');
      ctx.finish();
      ctx.done();
    });
    const file = writeConfig({ chat: [{ name: 'local', url: upstream.url }] });
    const contents = (): string[] => upstream.requests.map((r) => (r.body.messages as Array<{ content: string }>)[0].content);

    const unique = await bench(['-c', file, '-n', '4', '--concurrency', '2', '--prompt', 'tell me a story', '--json']);
    expect(unique.code, unique.stderr).toBe(0);
    expect(tiersOf(unique)[0]).toMatchObject({ prompt: 'unique', errors: 0 });
    const again = await bench(['-c', file, '-n', '1', '--prompt', 'tell me a story', '--json']);
    expect(again.code).toBe(0);
    const first = contents();
    for (const content of first) expect(content).toMatch(/^\[[0-9a-f]{8}\] tell me a story$/);
    // Every nonce differs: within a run and across runs.
    expect(new Set(first.map((c) => c.slice(0, 10))).size).toBe(5);

    const same = await bench(['-c', file, '-n', '3', '--prompt', 'tell me a story', '--same-prompt', '--json']);
    expect(same.code, same.stderr).toBe(0);
    expect(tiersOf(same)[0]).toMatchObject({ prompt: 'same' });
    expect(contents().slice(5)).toEqual(['tell me a story', 'tell me a story', 'tell me a story']);
  });

  it('against a llama-server that closes after every stream: no errors, stale sockets retried, cached tokens reported', async () => {
    const llama = await FakeLlamaServer.start({ words: ['a', ' b', ' c'] });
    h.defer(() => llama.close());
    const file = writeConfig({ chat: [{ name: 'local', url: llama.url, model: 'not-its-name' }] });
    const prompt = 'Write a short story about a lighthouse keeper who finds a message in a bottle.';

    const unique = await bench(['-c', file, '-n', '20', '--concurrency', '2', '--prompt', prompt, '--json']);
    expect(unique.code, unique.stderr).toBe(0);
    const [u] = tiersOf(unique);
    expect(u).toMatchObject({ requests: 20, errors: 0, error_samples: [], prompt: 'unique', output_tokens: 3 });
    expect(llama.streams).toBe(20);
    expect(u.stale_socket_retries).toBe(llama.staleHits);
    expect(u.stale_socket_retries).toBeGreaterThan(0);
    expect(u.prompt_tokens).toBeGreaterThan(20);
    expect(u.cached_tokens as number).toBeLessThan((u.prompt_tokens as number) * 0.4);

    const same = await bench(['-c', file, '-n', '4', '--concurrency', '1', '--prompt', prompt, '--same-prompt', '--json']);
    const [s] = tiersOf(same);
    expect(s).toMatchObject({ errors: 0, prompt: 'same' });
    expect(s.cached_tokens as number).toBeGreaterThan((s.prompt_tokens as number) * 0.7);

    const human = await bench(['-c', file, '-n', '4', '--prompt', prompt]);
    expect(human.stdout).toMatch(/^ {2}prompt {2}unique per request \(nonce first: no prompt-cache hit\); [\d.]+ tokens per request, [\d.]+ cached$/m);
    expect(human.stdout).toMatch(/requests? (was|were) sent again on a new connection: the server had closed the pooled keep-alive socket \(not errors\)/);
  });

  it('--through benches each route via a running proxy, which picks the tier', async () => {
    const url = await mock({ ttftMs: '300', name: 'm' });
    const file = writeConfig({
      chat: [
        { name: 'dead', url: DEAD_URL },
        { name: 'local', url },
      ],
    });
    const proxy = new ProxyServer({ config: loadConfig(file), port: 0 });
    const { url: proxyUrl } = await proxy.listen();
    h.defer(() => proxy.close(1000));

    const run = await bench(['-c', file, '--through', proxyUrl, '-n', '4', '--json']);

    expect(run.code, run.stderr).toBe(0);
    const [route] = tiersOf(run);
    expect(route).toMatchObject({ route: 'chat', tier: null, provider: null, model: 'chat', requests: 4, errors: 0 });
    expect(route.served_by).toEqual({ local: 4 }); // the dead first tier was failed over
    expect(route.ttft_ms.p50).toBeGreaterThanOrEqual(240);
    expect(route.ttft_ms.p50).toBeLessThanOrEqual(2000);

    const withV1 = await bench(['-c', file, '--through', `${proxyUrl}/v1`, '-n', '1', '--json']);
    expect(withV1.code, withV1.stderr).toBe(0);
  });

  it('prints a table and a block histogram for humans', async () => {
    const url = await mock({ ttftMs: '10:60', name: 'h', seed: '7' });
    const file = writeConfig({ chat: [{ name: 'local', url }] });

    const run = await bench(['-c', file, '-n', '6']);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^chat\/local {2}\(local · local-model\) {2}6 requests, 0 errors$/m);
    expect(run.stdout).toMatch(/^ {2}TTFT +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ ms$/m);
    expect(run.stdout).toContain('TTFT histogram');
    expect(run.stdout).toContain('█');
  });

  it('exits 2 on a bad config, an unknown route or tier, and bad numbers', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'version: 1\nproviders: {}\nroutes:\n  chat:\n    tierz: []\n');
    const badRun = await bench(['-c', bad]);
    expect(badRun.code).toBe(2);
    expect(badRun.stderr).toContain(`${bad}:5:`);

    const file = writeConfig({ chat: [{ name: 'local', url: DEAD_URL }] });
    const unknownRoute = await bench(['-c', file, '--route', 'nope']);
    expect(unknownRoute).toMatchObject({ code: 2, stdout: '' });
    expect(unknownRoute.stderr).toMatch(/unknown route "nope" \(known: chat\)/);

    const unknownTier = await bench(['-c', file, '--tier', 'nope']);
    expect(unknownTier.code).toBe(2);
    expect(unknownTier.stderr).toMatch(/unknown tier "nope".*known: local/);

    const tierThrough = await bench(['-c', file, '--tier', 'local', '--through', 'http://127.0.0.1:1']);
    expect(tierThrough.code).toBe(2);
    expect(tierThrough.stderr).toMatch(/--tier cannot be used with --through/);

    for (const args of [
      ['-n', '0'],
      ['--concurrency', '0'],
      ['-n', '2.5'],
      ['--max-tokens', 'x'],
    ]) {
      const run = await bench(['-c', file, ...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/expected a whole number of at least 1/);
    }
  });
});
