import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPrivateCli, runCli } from '../../helpers/cli.js';
import { completion, healthyStream, roleThenSilence } from '../../helpers/fake-upstream.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { configYaml } from '../../helpers/proxy.js';

// The package as it ships (buildPrivateCli: npm pack's files, run through bin's shebang as
// `llm-route` is), serving through undici: a stream and a failover. undici runs in the bundle on
// stand-ins for node:http2 and node:assert (src/runtime/bundle-stand-ins.ts); a broken one breaks
// this, and the last tests prove it on copies of the bundle with one stand-in broken on purpose.
const h = useHarness();
let cli: ReturnType<typeof buildPrivateCli>;
beforeAll(() => {
  cli = buildPrivateCli();
  // A module hook that names every module the process imports, on stderr.
  writeFileSync(
    join(cli.dir, 'hook.mjs'),
    "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('URL ' + r.url + '\\n'); return r; }\n",
  );
  writeFileSync(join(cli.dir, 'register.mjs'), "import { register } from 'node:module'; register('./hook.mjs', import.meta.url);\n");
}, 60_000);
afterAll(() => cli?.remove());

const timeouts = { connect_ms: 500, ttft_ms: 400, idle_ms: 2000, total_ms: 5000 };

/**
 * `serve` from `bin` with two tiers: `stall` (a stream that never starts, a 500 otherwise), then
 * `cloud`. Resolves, once both answers are checked, to the URLs of the modules it imported.
 */
async function streamAndFailOver(bin: string, env: Record<string, string> = {}): Promise<string[]> {
  const stall = await h.fake();
  stall.always((ctx) => (ctx.body.stream ? roleThenSilence('stall')(ctx) : ctx.json(500, { error: { message: 'overloaded', type: 'server_error' } })));
  const cloud = await h.fake();
  cloud.always((ctx) => (ctx.body.stream ? healthyStream(['b1', ' b2', ' b3'], { delayMs: 20 })(ctx) : ctx.json(200, completion('whole'))));
  const file = join(cli.dir, `serve-${stall.port}.yaml`);
  writeFileSync(
    file,
    configYaml({
      tiers: [
        { name: 'stall', url: stall.url, timeouts },
        { name: 'cloud', url: cloud.url, timeouts },
      ],
    }),
  );
  const proc = runCli(bin, ['serve', '--no-ui', '-c', file], {
    LLM_ROUTE_CONFIG: undefined,
    NODE_OPTIONS: `--import ${join(cli.dir, 'register.mjs')}`,
    ...env,
  });
  h.defer(() => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
  });
  const listening = JSON.parse(await proc.waitForLine((l) => l.includes('"listening"'), 15_000)) as { url: string };
  const client = new OpenAI({ baseURL: listening.url, apiKey: 'x', maxRetries: 0 });

  const stream = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true });
  const ids: string[] = [];
  let text = '';
  for await (const part of stream) {
    ids.push(part.id);
    text += part.choices[0]?.delta.content ?? '';
  }
  expect(text).toBe('b1 b2 b3');
  expect(ids.filter((id) => id.includes('stall'))).toEqual([]); // nothing of the stalled tier reached the client

  const whole = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] });
  expect(whole.choices[0].message.content).toBe('whole');
  // the stalled tier was asked both times (the 500 may be retried on it first)
  expect(new Set(stall.requests.filter((r) => r.url === '/v1/chat/completions').map((r) => r.body.stream === true))).toEqual(new Set([true, false]));

  const requests = () => proc.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'request');
  await waitFor(() => requests().length === 2, 5000, 'two request lines');
  expect(requests().map((l) => [l.stream, l.tier, l.status])).toEqual([
    [true, 'cloud', 200],
    [false, 'cloud', 200],
  ]);
  proc.child.kill('SIGTERM');
  expect(await proc.exited).toEqual({ code: 0, signal: null });
  return proc
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('URL '))
    .map((line) => line.slice(4));
}

/** A copy of the private package whose bundle has `find` replaced by `replace` in the stand-in named `standIn`. */
function breakStandIn(standIn: string, find: string, replace: string): string {
  const broken = buildPrivateCli();
  h.defer(() => broken.remove());
  const bundleDir = join(broken.dir, 'dist/bundle');
  const marker = `// \\0${standIn}\n`;
  const chunk = readdirSync(bundleDir).find((name) => name.endsWith('.js') && readFileSync(join(bundleDir, name), 'utf8').includes(marker));
  expect(chunk, `no chunk of dist/bundle holds ${marker.trim()}`).toBeDefined();
  const code = readFileSync(join(bundleDir, chunk as string), 'utf8');
  const at = code.indexOf(marker);
  const next = code.indexOf(find, at);
  expect(next, `${find} not in ${standIn}`).toBeGreaterThan(at);
  expect(code.slice(at, next)).not.toContain('\n// '); // still within the stand-in's own module
  writeFileSync(join(bundleDir, chunk as string), code.slice(0, next) + replace + code.slice(next + find.length));
  return broken.bin;
}

describe('the shipped bundle, run as `llm-route`', () => {
  it('serves a stream and a failover through undici on its stand-ins', async () => {
    const urls = await streamAndFailOver(cli.bin);
    // serve's own way in (src/cli/serve-args.ts), without the commander program
    expect(urls.filter((url) => url.endsWith('/dist/bundle/serve-args.js'))).toHaveLength(1);
    expect(urls.filter((url) => url.endsWith('/dist/bundle/main.js') || url.endsWith('/dist/cli/main.js') || url.endsWith('/dist/cli/serve-args.js'))).toEqual(
      [],
    );
  }, 30_000);

  it("does the same on undici's llhttp without wasm SIMD, which the bundle leaves in node_modules (UNDICI_NO_WASM_SIMD=1)", async () => {
    const urls = await streamAndFailOver(cli.bin, { UNDICI_NO_WASM_SIMD: '1' });
    expect(urls.filter((url) => url.endsWith('/dist/bundle/serve-args.js'))).toHaveLength(1);
  }, 30_000);

  it('does the same with its start-up tuning switched off (LLM_ROUTE_NO_TUNING=1: dist/ unbundled)', async () => {
    const urls = await streamAndFailOver(cli.bin, { LLM_ROUTE_NO_TUNING: '1' });
    expect(urls.filter((url) => url.includes('/dist/bundle/'))).toEqual([]);
    expect(urls.filter((url) => url.endsWith('/dist/cli/serve-args.js'))).toHaveLength(1);
  }, 30_000);

  it('fails that check with a broken assert stand-in (the function under a name, as a mistaken ESM default would put it)', async () => {
    const bin = breakStandIn('assert-stand-in', 'module.exports = function assert', 'module.exports.assert = function assert');
    // undici's first check throws a TypeError: every upstream call fails before it is sent
    await expect(streamAndFailOver(bin)).rejects.toThrow(/every tier of route "chat" failed: stall#1: transport_error; cloud#1: transport_error/);
  }, 30_000);

  it('fails that check with a broken http2 stand-in (no constants)', async () => {
    const bin = breakStandIn('http2-stand-in', 'constants: {', 'constantz: {');
    await expect(streamAndFailOver(bin)).rejects.toThrow(/exited before a matching line/);
  }, 30_000);
});
