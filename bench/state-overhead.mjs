#!/usr/bin/env node
// What the shared state costs per request: the same tier file served embedded and on Redis (a
// redis-server of its own on loopback), with a provider limit (rpm, tpm, concurrency) and a
// budget on the route, so every request pays admission and settle, each alone and together, and a
// fresh Idempotency-Key per request. Non-streaming load with autocannon against a fast mock, each
// server in its own process, rounds interleaved. Reports p50 / p99 and the p50 added by Redis.
//
//   npm run build && node bench/state-overhead.mjs [--rounds N] [--duration S] [--json FILE]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { freePort, installCleanup, startMock, startServe, stopAll } from './overhead/processes.mjs';
import { median, percentile } from './overhead/stats.mjs';

const { values: argv } = parseArgs({ options: { rounds: { type: 'string' }, duration: { type: 'string' }, json: { type: 'string' } } });
const rounds = Number(argv.rounds ?? 3);
const durationS = Number(argv.duration ?? 3);
const log = (msg) => process.stderr.write(`${msg}\n`);

installCleanup();
const tmp = mkdtempSync(join(os.tmpdir(), 'llm-route-state-bench-'));
let redis = null;
process.on('exit', () => {
  redis?.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

try {
  const port = await freePort();
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await sleep(300);
  const fast = await startMock('fast', ['--tokens', '10']);
  const tierFile = (name, state) => {
    const file = join(tmp, `${name}.yaml`);
    writeFileSync(
      file,
      `version: 1
server: { host: 127.0.0.1, port: 0 }
providers:
  limited: { type: openai, base_url: "${fast.url}", limits: { rpm: 100000000, tpm: 100000000000, concurrency: 100000, queue_ms: 1000 } }
  limited2: { type: openai, base_url: "${fast.url}", limits: { rpm: 100000000, tpm: 100000000000, concurrency: 100000, queue_ms: 1000 } }
  plain: { type: openai, base_url: "${fast.url}" }
  plain2: { type: openai, base_url: "${fast.url}" }
routes:
  bare:
    tiers: [{ name: plain, provider: plain, model: m }]
  limits:
    tiers: [{ name: limited, provider: limited, model: m }]
  budget:
    tiers: [{ name: plain, provider: plain2, model: m }]
  both:
    tiers: [{ name: limited, provider: limited2, model: m }]
budgets:
  - { scope: route:budget, per: day, tokens: 100000000000 }
  - { scope: route:both, per: day, tokens: 100000000000 }
usage: { path: "${join(tmp, `${name}.db`)}" }
${state}
`,
    );
    return file;
  };
  const embedded = await startServe(tierFile('embedded', ''));
  const shared = await startServe(tierFile('redis', `state: { redis: "redis://127.0.0.1:${port}/0", prefix: "bench:" }`));
  const targets = [
    { name: 'embedded', url: embedded.url },
    { name: 'redis', url: shared.url },
  ];
  const cases = [
    { name: 'nothing configured', model: 'bare', keyed: false },
    { name: 'Idempotency-Key (fresh per request)', model: 'bare', keyed: true },
    { name: 'limits (rpm, tpm, concurrency)', model: 'limits', keyed: false },
    { name: 'budget', model: 'budget', keyed: false },
    { name: 'limits + budget + Idempotency-Key', model: 'both', keyed: true },
  ];
  const results = {};
  for (const t of targets) for (const c of cases) await load(t, c, 10, 0.5); // warm up
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      for (const connections of [1, 10]) {
        for (const t of r % 2 ? [...targets].reverse() : targets) {
          const res = await load(t, c, connections, durationS);
          ((results[c.name] ??= {})[`c${connections}`] ??= {})[t.name] ??= [];
          results[c.name][`c${connections}`][t.name].push(res);
          log(
            `round ${r + 1} ${c.name} c${connections} ${t.name}: ${Math.round(res.rps)} req/s, p50 ${res.p50.toFixed(3)} ms, p99 ${res.p99.toFixed(3)} ms, non-2xx ${res.non2xx}, errors ${res.errors}`,
          );
        }
      }
    }
  }
  const lines = ['| case | conc. | embedded p50 ms | redis p50 ms | added p50 ms | embedded req/s | redis req/s |', '|---|---|---|---|---|---|---|'];
  for (const [name, byConn] of Object.entries(results)) {
    for (const [conn, byTarget] of Object.entries(byConn)) {
      const e = summary(byTarget.embedded);
      const s = summary(byTarget.redis);
      lines.push(
        `| ${name} | ${conn} | ${e.p50.toFixed(3)} | ${s.p50.toFixed(3)} | ${(s.p50 - e.p50).toFixed(3)} | ${Math.round(e.rps)} | ${Math.round(s.rps)} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  if (argv.json) writeFileSync(argv.json, `${JSON.stringify({ date: new Date().toISOString(), rounds, durationS, results }, null, 2)}\n`);
} finally {
  await stopAll();
  redis?.kill('SIGKILL');
}

function summary(list) {
  return { p50: median(list.map((x) => x.p50)), rps: median(list.map((x) => x.rps)) };
}

/** autocannon with exact per-response times (its own histogram has 1 ms resolution); a fresh key per request when `keyed`. */
function load(target, c, connections, seconds) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    let non2xx = 0;
    const body = JSON.stringify({ model: c.model, messages: [{ role: 'user', content: 'Say hello.' }] });
    const instance = autocannon(
      {
        url: `${target.url}/chat/completions`,
        method: 'POST',
        connections,
        pipelining: 1,
        duration: seconds,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            body,
            setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json', ...(c.keyed ? { 'idempotency-key': randomUUID() } : {}) } }),
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        const s = (result.finish - result.start) / 1000;
        resolve({ rps: latencies.length / s, p50: percentile(latencies, 50), p99: percentile(latencies, 99), non2xx, errors: result.errors });
      },
    );
    instance.on('response', (_client, status, _bytes, time) => {
      if (status >= 200 && status < 300) latencies.push(time);
      else non2xx++;
    });
  });
}
