// Start-up cost of `llm-route serve` against a bare `node` HTTP server: time from spawn to the
// first answered request (a chat completion through the proxy to a loopback upstream; a plain
// GET for the bare server), and RSS: 1.5 s after the spawn (what a process that has just started
// holds), then once idle, 3 s after that answer, and 15 s after, once V8 has settled. Alternates
// the two, N rounds, prints medians. With --ab, a third in each round: serve with its start-up
// tuning switched off (LLM_ROUTE_NO_TUNING=1, src/runtime/switch.ts); with --ab=zod,wasm-tier,
// only those pieces. With --other, a third in each round: another build's serve.
//   npm run build && node bench/startup.mjs [rounds] [--ab[=pieces]] [--other ../before]
//   (LLM_ROUTE_BIN=path/to/bin/llm-route.js: another build instead of this one)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const abArg = process.argv.find((arg) => arg === '--ab' || arg.startsWith('--ab='));
const ab = abArg && (abArg.split('=')[1] || '1'); // LLM_ROUTE_NO_TUNING's value for the third
const otherAt = process.argv.indexOf('--other');
const other = otherAt > 0 ? join(process.argv[otherAt + 1], 'bin/llm-route.js') : null; // another checkout's bin, built
const { LLM_ROUTE_NO_TUNING: _ignored, ...tunedEnv } = process.env;
const rounds = Number(process.argv.slice(2).find((arg, i, all) => !arg.startsWith('--') && all[i - 1] !== '--other') ?? 7);
const SETTLE_MS = 15_000;
const JUST_STARTED_MS = 1_500;
const dir = mkdtempSync(join(tmpdir(), 'llm-route-startup-'));

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
      }),
    );
  });
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const up = upstream.address().port;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

async function firstAnswer(url, init) {
  for (;;) {
    try {
      const res = await fetch(url, init);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function measure(kind) {
  const port = await freePort();
  let args;
  let url;
  let init;
  if (kind === 'node') {
    args = ['-e', `require('http').createServer((q,s)=>s.end('ok')).listen(${port},'127.0.0.1')`];
    url = `http://127.0.0.1:${port}/`;
  } else {
    const file = join(dir, `t-${port}.yaml`);
    writeFileSync(
      file,
      `version: 1\nserver: { port: ${port} }\nusage: { path: ${join(dir, `u-${port}.db`)} }\nproviders:\n  local: { type: openai, base_url: "http://127.0.0.1:${up}/v1" }\nroutes:\n  chat:\n    tiers: [{ provider: local, model: m }]\n`,
    );
    const bin = kind === 'other' ? other : (process.env.LLM_ROUTE_BIN ?? join(ROOT, 'bin/llm-route.js'));
    args = [bin, 'serve', '-c', file, '--no-ui'];
    url = `http://127.0.0.1:${port}/v1/chat/completions`;
    init = {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    };
  }
  const started = performance.now();
  const env = kind === 'untuned' ? { ...tunedEnv, LLM_ROUTE_NO_TUNING: ab } : tunedEnv;
  const child = spawn(process.execPath, args, { stdio: 'ignore', env });
  let justStarted = 0;
  const early = setTimeout(() => {
    justStarted = rssKb(child.pid) / 1024;
  }, JUST_STARTED_MS);
  await firstAnswer(url, init);
  const firstMs = performance.now() - started;
  await new Promise((r) => setTimeout(r, 3000)); // idle: whatever loads after listening has loaded
  clearTimeout(early);
  const rss = rssKb(child.pid) / 1024;
  // Settled: V8's memory reducer gives back start-up's garbage and nursery after ~8 s of quiet.
  await new Promise((r) => setTimeout(r, SETTLE_MS - 3000));
  const settled = rssKb(child.pid) / 1024;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { firstMs, justStarted, rss, settled };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kinds = ['node', 'serve', ...(ab ? ['untuned'] : []), ...(other ? ['other'] : [])];
const results = { node: [], serve: [], untuned: [], other: [] };
for (let i = 0; i < rounds; i++) for (const kind of kinds) results[kind].push(await measure(kind));
const summary = (runs) => ({
  first: median(runs.map((r) => r.firstMs)),
  justStarted: median(runs.map((r) => r.justStarted)),
  rss: median(runs.map((r) => r.rss)),
  settled: median(runs.map((r) => r.settled)),
});
const node = summary(results.node);
const serve = summary(results.serve);
const line = (s) =>
  `first answer ${s.first.toFixed(0)} ms, RSS ${s.justStarted.toFixed(1)} MB ${JUST_STARTED_MS / 1000} s after start, idle ${s.rss.toFixed(1)} MB at 3 s, ${s.settled.toFixed(1)} MB at ${SETTLE_MS / 1000} s`;
console.log(`bare node: ${line(node)}`);
console.log(`serve:     ${line(serve)}`);
const over = (s) =>
  `+${(s.first - node.first).toFixed(0)} ms (${(s.first / node.first).toFixed(2)}×), +${(s.justStarted - node.justStarted).toFixed(1)} MB at ${JUST_STARTED_MS / 1000} s after start, +${(s.rss - node.rss).toFixed(1)} MB at 3 s, +${(s.settled - node.settled).toFixed(1)} MB at ${SETTLE_MS / 1000} s`;
console.log(`serve − node: ${over(serve)} (goals: 2× bare node's first answer, 30 MB); ${rounds} rounds, medians`);
if (ab) {
  const untuned = summary(results.untuned);
  console.log(`serve, LLM_ROUTE_NO_TUNING=${ab}: ${line(untuned)}`);
  console.log(`untuned − node: ${over(untuned)}`);
}
if (other) {
  const o = summary(results.other);
  console.log(`other (${other}): ${line(o)}`);
  console.log(`other − node: ${over(o)}`);
}
upstream.close();
rmSync(dir, { recursive: true, force: true });
