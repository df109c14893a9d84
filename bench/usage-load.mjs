#!/usr/bin/env node
// Does the usage log keep up? 1,000 requests/s for 60 s through `llm-route serve` (a fast mock
// behind it), a clean stop (SIGTERM), then `llm-route usage --json` must count every request.
// Needs dist/ (npm run build).
//
//   node bench/usage-load.mjs [--rate 1000] [--duration 60] [--connections 50] [--stream]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { cpuMs } from './overhead/procfs.mjs';
import { installCleanup, ROOT, startMock, startServe, stopAll } from './overhead/processes.mjs';

const { values: argv } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '60' },
    connections: { type: 'string', default: '50' },
    stream: { type: 'boolean', default: false },
  },
});
const rate = Number(argv.rate);
const durationS = Number(argv.duration);
const connections = Number(argv.connections);
if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  console.error('dist/ is missing: run `npm run build` first.');
  process.exit(2);
}

installCleanup();
const tmp = mkdtempSync(join(os.tmpdir(), 'llm-route-usage-load-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const log = (msg) => process.stderr.write(`${msg}\n`);

try {
  const fast = await startMock('fast', ['--tokens', '20']);
  const db = join(tmp, 'usage.db');
  const tierFile = join(tmp, 'tiers.yaml');
  writeFileSync(
    tierFile,
    `version: 1
server: { port: 0 }
providers:
  fast: { type: openai, base_url: "${fast.url}", price: { input_per_mtok: 0.15, output_per_mtok: 0.6 } }
routes:
  bench:
    tiers:
      - { name: fast, provider: fast, model: m }
usage: { path: ${JSON.stringify(db)} }
`,
  );
  const proxy = await startServe(tierFile);
  // serve's JSON request log: one line per request_end event, the same events the usage log keeps.
  const loggedIds = new Set();
  const otherLines = {};
  let partial = '';
  proxy.child.proc.stdout.on('data', (chunk) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop();
    for (const line of lines) {
      const event = /"event":"([a-z_]+)"/.exec(line)?.[1];
      if (event === 'request') loggedIds.add(/"id":"([^"]+)"/.exec(line)[1]);
      else otherLines[event] = (otherLines[event] ?? 0) + 1;
    }
  });
  log(
    `llm-route ${proxy.url} (pid ${proxy.pid}), usage log ${db}; ${rate} req/s for ${durationS} s over ${connections} connections${argv.stream ? ', streaming' : ''}`,
  );

  const statuses = {};
  const cpuBefore = cpuMs(proxy.pid);
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${proxy.url}/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'bench', ...(argv.stream ? { stream: true } : {}), messages: [{ role: 'user', content: 'Say hello.' }] }),
        connections,
        overallRate: rate,
        duration: durationS,
        timeout: 10,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, statusCode) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
  const proxyCpuMs = cpuMs(proxy.pid) - cpuBefore;
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  const seconds = (result.finish - result.start) / 1000;
  log(
    `sent for ${seconds.toFixed(1)} s: ${answered} answers ${JSON.stringify(statuses)} (${(answered / seconds).toFixed(0)}/s), errors ${result.errors}, timeouts ${result.timeouts}; proxy CPU ${(proxyCpuMs / seconds / 10).toFixed(0)} % of a core`,
  );

  const exit = await proxy.child.stop();
  log(`llm-route stopped (exit ${exit})`);
  const usage = spawnSync(process.execPath, [join(ROOT, 'bin/llm-route.js'), 'usage', '-c', tierFile, '--json', '--since', '1h'], { encoding: 'utf8' });
  if (usage.status !== 0) throw new Error(`usage exited ${usage.status}: ${usage.stderr}`);
  const report = JSON.parse(usage.stdout);
  const file = new Database(db, { readonly: true });
  const rows = file.prepare('SELECT count(*) AS n FROM requests').get().n;
  const attempts = file.prepare('SELECT count(*) AS n FROM attempts').get().n;
  const byOutcome = Object.fromEntries(
    file
      .prepare("SELECT outcome || ' ' || status AS k, count(*) AS n FROM requests GROUP BY 1")
      .all()
      .map((r) => [r.k, r.n]),
  );
  const storedIds = new Set(file.prepare('SELECT id FROM requests').pluck().all());
  file.close();
  const missing = [...loggedIds].filter((id) => !storedIds.has(id));
  const okRows = byOutcome['ok 200'] ?? 0;
  // Every request of the JSON request log must be a row. autocannon stops with requests in flight:
  // those the proxy finished still count as 200s in the log though the client never read them, so
  // the log may hold a few more 200s than the client saw.
  const requestLogLines = loggedIds.size;
  const summary = {
    rate,
    durationS,
    connections,
    stream: argv.stream,
    answered,
    statuses,
    clientErrors: result.errors,
    timeouts: result.timeouts,
    answeredPerS: +(answered / seconds).toFixed(1),
    requestLogLines,
    otherLogLines: otherLines,
    usageRequests: report.totals.requests,
    rows,
    attempts,
    rowsByOutcome: byOutcome,
    lost: missing.length + Math.max(0, (statuses[200] ?? 0) - okRows),
    missingIds: missing.slice(0, 5),
    proxyCpuPctOfCore: +(proxyCpuMs / seconds / 10).toFixed(1),
    costUsd: report.totals.cost_usd,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  log(
    summary.lost === 0
      ? `no row lost: \`usage\` counts ${report.totals.requests} requests, the request log has ${requestLogLines} lines; 200s in the log ${okRows} ≥ ${statuses[200] ?? 0} the client read`
      : `LOST ${summary.lost} rows (request log ${requestLogLines} lines, usage ${report.totals.requests}; 200s the client read ${statuses[200] ?? 0}, in the log ${okRows})`,
  );
  process.exitCode = summary.lost === 0 ? 0 : 1;
} finally {
  await stopAll();
}
