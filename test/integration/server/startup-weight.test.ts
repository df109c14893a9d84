import { spawn, spawnSync } from 'node:child_process';
import module from 'node:module';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/cli.js';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';

const h = useHarness();
const dir = mkdtempSync(join(tmpdir(), 'llm-route-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module hook that names every package the process loads (and every other module's URL), on stderr.
writeFileSync(
  join(dir, 'hook.mjs'),
  `export async function resolve(s, c, next) { const r = await next(s, c); const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(r.url); if (m) process.stderr.write('LOADED ' + m[1] + '\\n'); else process.stderr.write('URL ' + r.url + '\\n'); return r; }\n`,
);
writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module'; register('./hook.mjs', import.meta.url);\n`);
// And, as the main thread exits, every CommonJS file it loaded (the hook above does not see
// require(), nor can it tell the hook's own thread from the main thread's), and the builtins it
// loaded (Node's own, from process.moduleLoadList).
writeFileSync(
  join(dir, 'required.cjs'),
  `const { isMainThread } = require('node:worker_threads'); if (isMainThread) process.on('exit', () => { for (const file of Object.keys(require.cache)) process.stderr.write('REQUIRED ' + file + '\\n'); for (const name of process.moduleLoadList) if (name.startsWith('NativeModule ')) process.stderr.write('BUILTIN ' + name.slice(13) + '\\n'); });\n`,
);
// When the main thread has sent its first answer, whether SQLite (better-sqlite3) is loaded yet.
writeFileSync(
  join(dir, 'first-answer.cjs'),
  `const { isMainThread } = require('node:worker_threads'); if (isMainThread) { const net = require('node:net'); const emit = net.Server.prototype.emit; let seen = false; net.Server.prototype.emit = function (event, req, res) { if (event === 'request' && !seen) { seen = true; res.once('finish', () => process.stderr.write('SQLITE_AT_FIRST_ANSWER ' + Object.keys(require.cache).some((file) => file.includes('/node_modules/better-sqlite3/')) + '\\n')); } return emit.apply(this, arguments); }; }\n`,
);
// Every 100 ms, the young generation as V8 holds it now, and the most V8 has ever had malloc'd;
// a worker thread (preloads run in each) says so.
writeFileSync(
  join(dir, 'heap.cjs'),
  `const v8 = require('node:v8'); if (!require('node:worker_threads').isMainThread) process.stderr.write('WORKER\\n'); setInterval(() => process.stderr.write('YOUNG ' + v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size + '\\nPEAK_MALLOC ' + v8.getHeapStatistics().peak_malloced_memory + '\\n'), 100).unref();\n`,
);

/**
 * Starts `serve` (`preload`: node flags before the bin) with its stderr's lines going to
 * `onLine`, and has it answer `answers` chat requests; resolves to a function that stops it.
 */
async function serveAnswering(name: string, preload: string[], onLine: (line: string) => void, answers = 1): Promise<() => Promise<void>> {
  const upstream = await h.fake();
  upstream.always((ctx) => ctx.json(200, completion('ok')));
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `version: 1\nserver: { port: 0 }\nusage: { path: ${join(dir, `${name}.db`)} }\nproviders:\n  local: { type: openai, base_url: "${upstream.url}" }\nroutes:\n  chat:\n    tiers: [{ provider: local, model: m }]\n`,
  );
  const child = spawn(process.execPath, [...preload, 'bin/llm-route.js', 'serve', '-c', file, '--no-ui'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  createInterface({ input: child.stderr }).on('line', onLine);
  const exited = new Promise((resolve) => child.once('close', resolve));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout }).on('line', (line) => {
        const event = JSON.parse(line) as { event?: string; url?: string };
        if (event.event === 'listening') resolve(event.url as string);
      }),
    );
    for (let i = 0; i < answers; i++) {
      const res = await fetch(`${url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return stop;
}

describe('serve start-up stays light', () => {
  it('answers a request from a few bundle files, without loading execa, ioredis or the tokenizer (none is needed for it)', async () => {
    const loaded = new Set<string>();
    const required: string[] = [];
    const builtins: string[] = [];
    const urls: string[] = [];
    let sqliteAtFirstAnswer: string | undefined;
    const stop = await serveAnswering(
      'light',
      ['--import', join(dir, 'register.mjs'), '--require', join(dir, 'required.cjs'), '--require', join(dir, 'first-answer.cjs')],
      (line) => {
        if (line.startsWith('SQLITE_AT_FIRST_ANSWER ')) sqliteAtFirstAnswer = line.slice(23);
        if (line.startsWith('LOADED ')) loaded.add(line.slice(7));
        if (line.startsWith('REQUIRED ')) required.push(line.slice(9));
        if (line.startsWith('BUILTIN ')) builtins.push(line.slice(8));
        if (line.startsWith('URL ')) urls.push(line.slice(4));
      },
    );
    try {
      expect(urls.some((url) => url.endsWith('/dist/bundle/serve-args.js'))).toBe(true); // the hook works
      for (const heavy of ['execa', 'ioredis', 'gpt-tokenizer']) expect([...loaded]).not.toContain(heavy);
    } finally {
      await stop();
    }
    // llm-route runs from a few files of dist/bundle/ (scripts/bundle.mjs), not its ~215 modules
    // of dist/ (bin/llm-route.js itself takes only src/runtime/start.ts's three files from there).
    const distUrls = urls.filter((url) => url.includes('/dist/'));
    expect(distUrls.filter((url) => !url.includes('/dist/bundle/') && !/\/dist\/runtime\/(start|switch|compile-cache)\.js$/.test(url))).toEqual([]);
    expect(new Set(distUrls).size).toBeLessThan(23);
    // What those bundle files hold, by their manifest: every module this start-up parsed (a
    // CommonJS one among them runs only once it is required).
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
    const modules = distUrls.flatMap((url) => manifest[url.slice(url.lastIndexOf('/dist/bundle/') + '/dist/bundle/'.length)] ?? []);
    expect(modules).toContain('dist/server/server.js');
    // serve starts without the commander program (src/cli/serve-args.ts; bin/llm-route.js).
    expect(distUrls.some((url) => url.endsWith('/dist/bundle/main.js'))).toBe(false);
    expect(modules.filter((id) => id.startsWith('node_modules/commander/'))).toEqual([]);
    for (const heavy of ['execa', 'ioredis', 'gpt-tokenizer']) expect(modules.filter((id) => id.startsWith(`node_modules/${heavy}/`))).toEqual([]);
    expect(required.filter((file) => /\/node_modules\/(execa|ioredis|gpt-tokenizer)\//.test(file))).toEqual([]);
    // The main thread takes from undici only what it uses (src/util/undici.ts): not its index, its
    // WebSocket, caches or mocks, nor fetch's body code, which its clients require only for a
    // FormData body, nor llhttp without SIMD (both left in node_modules: src/runtime/bundle-stand-ins.ts)...
    expect(modules.some((id) => id.startsWith('node_modules/undici/lib/dispatcher/'))).toBe(true);
    expect(modules.filter((id) => /^node_modules\/undici\/(index\.js|lib\/(web\/(websocket|cache|eventsource)|mock|cache)\/)/.test(id))).toEqual([]);
    expect(modules.filter((id) => id.startsWith('node_modules/undici/lib/web/') || id === 'node_modules/undici/lib/llhttp/llhttp-wasm.js')).toEqual([]);
    expect(required.filter((file) => file.includes('/node_modules/undici/'))).toEqual([]);
    // ...nor prom-client's default metrics, push gateway and cluster aggregation (src/telemetry/prom.ts)...
    expect(modules).toContain('node_modules/prom-client/lib/registry.js');
    expect(modules).not.toContain('node_modules/prom-client/index.js');
    // ...nor traces, which this config does not turn on (src/server/trace-link.ts): no module of
    // src/tracing/, no OpenTelemetry package, and no bundle file that holds either...
    expect(modules.filter((id) => id.startsWith('dist/tracing/') || id.includes('/@opentelemetry/'))).toEqual([]);
    expect([...loaded].filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
    expect(required.filter((file) => file.includes('/@opentelemetry/'))).toEqual([]);
    // ...nor the savers, which this config's route does not have (src/server/wire-app.ts, src/proxy/model-request.ts)...
    expect(modules.filter((id) => id === 'dist/savers/pipeline.js' || id === 'dist/savers/registry.js')).toEqual([]);
    // ...and writes its usage row on this thread (src/usage/engine-link.ts; a test below: no
    // worker thread), having answered first: SQLite loads after the first answer.
    expect(required.some((file) => file.includes('/node_modules/better-sqlite3/'))).toBe(true);
    expect(sqliteAtFirstAnswer).toBe('false');
    // zod is in the bundle (scripts/bundle.mjs), with English and none of its other locales, and
    // nothing of it loads from node_modules.
    expect([...loaded]).not.toContain('zod');
    expect(modules).toContain('node_modules/zod/v4/classic/schemas.js');
    expect(modules).toContain('node_modules/zod/v4/locales/en.js');
    expect(modules.filter((id) => /^node_modules\/zod\/v4\/locales\/(?!en\.js$)/.test(id))).toEqual([]);
    expect(required.filter((file) => file.includes('/node_modules/zod/'))).toEqual([]);
    // Of Node's own modules, none that nothing here uses (scripts/bundle.mjs's requireImports,
    // src/runtime/bundle-stand-ins.ts): Node's copy of undici, which an ESM import of node:http loads on Node 22+
    // for its WebSocket export; http2, which undici's HTTP/2 client requires as it loads; tls,
    // which undici loads for its first https connection and src/providers/upstream-dispatcher.ts
    // for a ca_file:, neither of them here; assert, which undici requires for its checks
    // (the assert stand-in); crypto, for hashes and owners' ids, not a request's own ids
    // (src/util/node-crypto.ts, src/util/correlation-id.ts).
    expect(builtins).toContain('net'); // the list is there
    expect(builtins.filter((name) => ['internal/deps/undici/undici', 'http2', 'tls', 'assert', 'crypto'].includes(name))).toEqual([]);
  }, 30_000);

  // Node 20's V8 has no GC call that shrinks the young generation (src/runtime/settle-when-quiet.ts).
  it.skipIf(Number(process.versions.v8.split('.')[0]) < 12)(
    'once quiet after its first answer, gives back the young generation (src/runtime/settle-when-quiet.ts)',
    async () => {
      let young = 0; // bytes, latest
      let answered = false;
      let grownAfterAnswer = false;
      const stop = await serveAnswering('quiet', ['--require', join(dir, 'heap.cjs')], (line) => {
        const m = /^YOUNG (\d+)$/.exec(line);
        if (!m) return;
        young = Number(m[1]);
        if (answered && young >= 1024 * 1024) grownAfterAnswer = true;
      });
      answered = true;
      try {
        // It grew while loading (V8's young generation starts at 1 MB or less)...
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(grownAfterAnswer).toBe(true);
        // ...and gives it back within a few seconds of quiet, where V8 by itself would keep it.
        const deadline = Date.now() + 10_000;
        while (young >= 1024 * 1024 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(young).toBeLessThan(1024 * 1024);
      } finally {
        await stop();
      }
    },
    30_000,
  );

  it("starts no worker thread (src/usage/engine-link.ts) and keeps undici's HTTP parser on V8's baseline wasm compiler: no TurboFan compile of it, whose malloc peak would stay (src/runtime/wasm-baseline-tier.ts)", async () => {
    let peak = 0;
    let workers = 0;
    const stop = await serveAnswering(
      'parser',
      ['--require', join(dir, 'heap.cjs')],
      (line) => {
        if (line === 'WORKER') workers++;
        const m = /^PEAK_MALLOC (\d+)$/.exec(line);
        if (m) peak = Math.max(peak, Number(m[1]));
      },
      60,
    );
    try {
      // V8 tiers llhttp's parse loop up within a few dozen responses, on a background thread, in
      // about a second: 23 MB peak on Node 24, 37 MB on Node 20; on Liftoff the peak stays ~3 MB.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(peak).toBeGreaterThan(0); // the preload reports
      expect(peak).toBeLessThan(10 * 1024 * 1024);
      // On Node 22+ a worker costs ~14 MB for as long as the process lives.
      expect(workers).toBe(0);
    } finally {
      await stop();
    }
  }, 30_000);

  // Node 22.1+ only (module.enableCompileCache): Node 20 has no compile cache to keep.
  it.skipIf(!('enableCompileCache' in module))(
    "keeps Node's compile cache in $XDG_CACHE_HOME/llm-route, nothing in the temp dir (src/runtime/compile-cache.ts)",
    () => {
      const cache = mkdtempSync(join(dir, 'cache-'));
      const tmp = mkdtempSync(join(dir, 'tmp-'));
      const run = spawnSync(process.execPath, ['bin/llm-route.js', '--version'], {
        cwd: repoRoot,
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: cache, TMPDIR: tmp },
      });
      expect(run.status).toBe(0);
      expect(readdirSync(join(cache, 'llm-route', 'compile-cache')).length).toBeGreaterThan(0);
      expect(readdirSync(tmp)).toEqual([]);
      expect(existsSync(join(tmp, 'node-compile-cache'))).toBe(false);
    },
  );
});
