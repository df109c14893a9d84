// The whole run of `llm-route statusline` as Claude Code runs it (a process per update: Claude
// Code's status JSON on stdin, one line out), against a running `serve` that has seen the
// session, next to a bare `node -e 0` and an empty ES module: Node's own start is most of it.
// Alternates the three, N rounds; prints each one's min and median wall time, and the median of
// statusline minus the empty module's in the same round.
//   npm run build && node bench/statusline.mjs [rounds]     (LLM_ROUTE_BIN=path/to/bin/llm-route.js: another build)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseMockOptions } from '../dist/mock/options.js';
import { startMock } from '../dist/mock/server.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = process.env.LLM_ROUTE_BIN ?? join(ROOT, 'bin/llm-route.js');
const rounds = Number(process.argv[2] ?? 30);
const dir = mkdtempSync(join(tmpdir(), 'llm-route-statusline-bench-'));
const SESSION = 'bench-session-0001';

// The upstream: llm-route's own mock (it reports usage, so the session has a cost).
const upstream = await startMock(parseMockOptions({ name: 'up' }));
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = s.address();
    s.close(() => resolve(p));
  });
});
const tiers = join(dir, 'tiers.yaml');
writeFileSync(
  tiers,
  `version: 1
server: { port: ${port} }
usage: { path: ${JSON.stringify(join(dir, 'usage.db'))} }
providers:
  up: { type: openai, base_url: "${upstream.url}", price: { input_per_mtok: 1, output_per_mtok: 1 } }
routes:
  chat: { tiers: [{ provider: up, model: m }] }
`,
);
const serve = spawn(process.execPath, [BIN, 'serve', '--no-ui', '-c', tiers], { stdio: ['ignore', 'pipe', 'inherit'] });
serve.stdout.resume();
const origin = `http://127.0.0.1:${port}`;
for (;;) {
  try {
    const res = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-claude-code-session-id': SESSION },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.arrayBuffer();
    if (res.ok) break;
  } catch {
    /* not listening yet */
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}

const input = JSON.stringify({ session_id: SESSION, model: { id: 'chat', display_name: 'chat' }, workspace: { current_dir: dir } });
const empty = join(dir, 'empty.mjs');
writeFileSync(empty, 'export {};\n');
const runs = {
  statusline: () => spawnSync(process.execPath, [BIN, 'statusline', '--url', origin], { input, encoding: 'utf8' }),
  'node -e 0': () => spawnSync(process.execPath, ['-e', '0'], { input }),
  'empty module': () => spawnSync(process.execPath, [empty], { input }),
};
const times = Object.fromEntries(Object.keys(runs).map((name) => [name, []]));
let line = '';
for (let i = 0; i < rounds + 1; i++) {
  for (const [name, run] of Object.entries(runs)) {
    const start = process.hrtime.bigint();
    const result = run();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (name === 'statusline') line = result.stdout.trim();
    if (i > 0) times[name].push(ms); // the first round warms the disk cache
  }
}
serve.kill('SIGTERM');
await new Promise((resolve) => serve.once('exit', resolve));
await upstream.close();
rmSync(dir, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};
console.log(`statusline printed: ${line}`);
console.log(`${rounds} rounds, wall ms per process (spawn to exit)`);
for (const [name, xs] of Object.entries(times)) console.log(`  ${name.padEnd(13)} min ${Math.min(...xs).toFixed(1)}  median ${median(xs).toFixed(1)}`);
const extra = times.statusline.map((ms, i) => ms - times['empty module'][i]);
console.log(`  statusline − empty module, same round: median ${median(extra).toFixed(1)} ms`);
