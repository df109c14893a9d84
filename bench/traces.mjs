#!/usr/bin/env node
// What traces cost (README "Traces"): CPU per request of `llm-route serve` with traces off and on,
// at a fixed rate (default 1,000 req/s, c10), non-streaming and streaming, in rounds that rotate
// the order.
// With traces on, spans go over OTLP/HTTP (protobuf; --json: http/json) to a local receiver that
// answers at once, in the default batches (512 spans or 5 s, whichever first); the receiver runs
// in this process, so its CPU is not counted. The threads' schedstat times are exact (procfs.mjs).
//
//   npm run build && node bench/traces.mjs [--rate 1000] [--rounds 10] [--secs 4] [--json]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad } from './overhead/load.mjs';
import { Child, installCleanup, ROOT, startMock, stopAll } from './overhead/processes.mjs';
import { median } from './overhead/stats.mjs';

const { values: argv } = parseArgs({ options: { rate: { type: 'string' }, rounds: { type: 'string' }, secs: { type: 'string' }, json: { type: 'boolean' } } });
const RATE = Number(argv.rate ?? 1000);
const ROUNDS = Number(argv.rounds ?? 10);
const SECS = Number(argv.secs ?? 4);

installCleanup();

// The collector: counts exports and their bytes, answers 200 with an empty ExportTraceServiceResponse.
const received = { exports: 0, bytes: 0 };
const collector = createServer((req, res) => {
  req.on('data', (chunk) => (received.bytes += chunk.length));
  req.on('end', () => {
    received.exports++;
    res.writeHead(200, { 'content-type': argv.json ? 'application/json' : 'application/x-protobuf' }).end(argv.json ? '{}' : '');
  });
});
await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
const collectorUrl = `http://127.0.0.1:${collector.address().port}`;

const mock = await startMock('fast', ['--tokens', '100']);
const tmp = mkdtempSync(join(tmpdir(), 'llm-route-traces-'));

/** `llm-route serve` in front of the mock, with `env` (the OTEL_* variables, or none). */
async function serve(name, env) {
  const config = join(tmp, `${name}.yaml`);
  writeFileSync(
    config,
    [
      'version: 1',
      'server: { port: 0 }',
      `usage: { path: ${JSON.stringify(join(tmp, `${name}.db`))} }`,
      `providers: { fast: { type: openai, base_url: ${JSON.stringify(mock.url)}, health: { warmup: false } } }`,
      'routes: { bench: { tiers: [ { provider: fast, model: m } ] } }',
      '',
    ].join('\n'),
  );
  const child = new Child(`serve (${name})`, [`${ROOT}bin/llm-route.js`, 'serve', '--no-ui', '-c', config], { env });
  const [, url] = await child.waitFor(/"event":"listening"[^\n]*?"url":"([^"]+)"/);
  return { label: name, url, pid: child.pid };
}

// Three targets: a server with traces off, and one with traces on asked two ways: with a client's
// traceparent whose sampled flag is off (no span is made: all it costs is reading the events) and
// with one whose flag is on (every span made and exported). Those two are the same process, so
// their difference is what making and exporting spans costs, free of the noise between two
// processes on a shared machine.
const off = await serve('traces off', { OTEL_SDK_DISABLED: 'true' });
const on = await serve('traces on', { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, ...(argv.json ? { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } : {}) });
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7';
const targets = [
  { ...off, label: 'traces off', headers: {} },
  { ...on, label: 'on, not sampled', headers: { traceparent: `00-${TRACE}-00` } },
  { ...on, label: 'on, traced', headers: { traceparent: `00-${TRACE}-01` } },
];

async function run(target, stream, seconds) {
  const body = JSON.stringify({ model: 'bench', stream, messages: [{ role: 'user', content: 'Say hello.' }] });
  const load = await runLoad(
    { url: target.url, headers: target.headers, body },
    { connections: 10, durationS: seconds, rate: RATE, cpuPids: { proxy: target.pid } },
  );
  if (load.non2xx > 0 || load.errors > 0) console.error(`${target.label}: ${load.non2xx} non-2xx, ${load.errors} errors`);
  return { us: load.cpuMsPerRequest.proxy * 1000, rps: load.rps };
}

const results = new Map();
for (const stream of [false, true]) {
  for (const target of targets) await run(target, stream, 2); // warm-up: JIT, pools, the tracing bundle file
  for (let r = 0; r < ROUNDS; r++) {
    const order = [0, 1, 2].map((i) => targets[(i + r) % 3]); // each in each place in turn
    for (const target of order) {
      const key = `${target.label}|${stream}`;
      if (!results.has(key)) results.set(key, []);
      results.get(key).push(await run(target, stream, SECS));
    }
    const line = targets.map((t) => `${t.label} ${results.get(`${t.label}|${stream}`).at(-1).us.toFixed(1)} µs`).join(', ');
    console.log(`${stream ? 'stream' : 'whole'} round ${r + 1}: ${line}`);
  }
}

console.log(`\n${RATE} req/s, c10, ${ROUNDS} rounds of ${SECS} s, medians; spans over OTLP/HTTP ${argv.json ? 'JSON' : 'protobuf'}:\n`);
// Ratios within a round (its targets ran back to back), then the median over the rounds: a shared
// machine's speed drifts between rounds far more than within one.
console.log('| answer | traces off, µs/request | on, not sampled | on, traced | traced ÷ not sampled (same process) | traced ÷ off | req/s (traced) |');
console.log('|---|---|---|---|---|---|---|');
for (const stream of [false, true]) {
  const [a, u, t] = targets.map((x) => results.get(`${x.label}|${stream}`));
  const us = (list) => median(list.map((x) => x.us)).toFixed(1);
  const ratio = (list, to) => median(to.map((x, i) => list[i].us / x.us)).toFixed(3);
  console.log(
    `| ${stream ? 'stream' : 'whole'} | ${us(a)} | ${us(u)} | ${us(t)} | ${ratio(t, u)}× | ${ratio(t, a)}× | ${median(t.map((x) => x.rps)).toFixed(0)} |`,
  );
}
console.log(`\nthe collector received ${received.exports} exports, ${(received.bytes / 1024 / 1024).toFixed(1)} MiB`);
await stopAll();
collector.close();
