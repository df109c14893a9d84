#!/usr/bin/env node
// What llm-route adds to a big embeddings batch (docs/embeddings.md): a 1,000-input batch of
// 768-wide vectors (llama-server's exact answer shape, ~9 MB of numbers) sent straight to the
// upstream, through the json pipe (bench/overhead/json-pipe.mjs: parse, set the model, forward,
// pipe the answer back), and through `llm-route serve` relaying it (OpenAI client, openai tier: the
// answer's bytes pass, scanned, never decoded). For scale, two paths that must decode: the same
// batch split by max_batch 256 and joined, and an Ollama client on the openai tier (translated).
// Each server is its own process; requests go one at a time, the targets' order rotating per
// round; the time is the client's, request sent to the answer's last byte.
//
//   npm run build && node bench/embeddings.mjs [--rounds 7] [--requests 15] [--inputs 1000] [--width 768] [--json]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { cpuMs } from './overhead/procfs.mjs';
import { Child, installCleanup, ROOT, startScript, stopAll } from './overhead/processes.mjs';
import { median } from './overhead/stats.mjs';

const { values: argv } = parseArgs({
  options: { rounds: { type: 'string' }, requests: { type: 'string' }, inputs: { type: 'string' }, width: { type: 'string' }, json: { type: 'boolean' } },
});
const ROUNDS = Number(argv.rounds ?? 7);
const REQUESTS = Number(argv.requests ?? 15);
const INPUTS = Number(argv.inputs ?? 1000);
const WIDTH = Number(argv.width ?? 768);

installCleanup();

// The upstream: llama-server's /v1/embeddings answer (model, object, usage, data), one vector per
// input, each vector's text made once at start (so the upstream's own time is a string join).
const UPSTREAM = `
import { createServer } from 'node:http';
const WIDTH = ${WIDTH};
const vectors = Array.from({ length: ${INPUTS} }, (_, i) => JSON.stringify(Array.from({ length: WIDTH }, (_, j) => Math.sin(i * 7919 + j) * 0.05)));
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    // Only its embeddings: what llm-route's discovery asks (/props, /v1/models, …) is a 404.
    if (req.method !== 'POST' || !req.url.endsWith('/embeddings')) return void res.writeHead(404).end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const n = Array.isArray(body.input) ? body.input.length : 1;
    const data = [];
    for (let i = 0; i < n; i++) data.push('{"embedding":' + vectors[i % vectors.length] + ',"index":' + i + ',"object":"embedding"}');
    const text = '{"model":' + JSON.stringify(body.model) + ',"object":"list","usage":{"prompt_tokens":' + n * 24 + ',"total_tokens":' + n * 24 + '},"data":[' + data.join(',') + ']}';
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('upstream listening on http://127.0.0.1:' + server.address().port + '/v1\\n'));
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); });
`;

const upstreamChild = new Child('upstream', ['--input-type=module', '-e', UPSTREAM]);
const [, upstream] = await upstreamChild.waitFor(/listening on (http:\/\/\S+)/);
const pipe = await startScript('json pipe', 'json-pipe.mjs', [upstream, 'nomic']);

const tmp = mkdtempSync(join(tmpdir(), 'llm-route-embeddings-bench-'));
const config = join(tmp, 'tiers.yaml');
writeFileSync(
  config,
  [
    'version: 1',
    'server: { port: 0 }',
    `usage: { path: ${JSON.stringify(join(tmp, 'usage.db'))} }`,
    `providers: { box: { type: openai, base_url: ${JSON.stringify(upstream)}, health: { warmup: false } } }`,
    'routes:',
    `  embed: { kind: embeddings, tiers: [ { provider: box, model: nomic, max_batch: ${INPUTS} } ] }`,
    '  split: { kind: embeddings, space: nomic, tiers: [ { provider: box, model: nomic, max_batch: 256 } ] }',
    '',
  ].join('\n'),
);
const serve = new Child('llm-route serve', [`${ROOT}bin/llm-route.js`, 'serve', '--no-ui', '-c', config]);
const [, served] = await serve.waitFor(/"event":"listening"[^\n]*?"url":"([^"]+)"/);

// A code index's batch: 1,000 chunks of ~120 characters.
const inputs = Array.from(
  { length: INPUTS },
  (_, i) => `function chunk${i}(a, b) { return a.map((x) => x * ${i} + b); } // line ${i} of the file being indexed`,
);
const body = (model) => JSON.stringify({ model, input: inputs });

const TARGETS = [
  { label: 'direct', url: `${upstream}/embeddings`, body: body('nomic'), pid: null },
  { label: 'json pipe', url: `${pipe.url}/embeddings`, body: body('embed'), pid: pipe.pid },
  { label: 'llm-route relay', url: `${served}/embeddings`, body: body('embed'), pid: serve.pid },
  { label: 'llm-route split 4×256', url: `${served}/embeddings`, body: body('split'), pid: serve.pid },
  { label: 'llm-route translated (Ollama client)', url: `${served.replace(/\/v1$/, '')}/api/embed`, body: body('embed'), pid: serve.pid },
];

/** One request: the client's time to the answer's last byte, and the answer's size. */
async function once(target) {
  const started = process.hrtime.bigint();
  const res = await request(target.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: target.body });
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  if (res.statusCode !== 200) throw new Error(`${target.label} (${target.url}): HTTP ${res.statusCode}`);
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, bytes };
}

const samples = new Map(TARGETS.map((t) => [t.label, { ms: [], cpu: [], bytes: 0 }]));
for (const target of TARGETS) await once(target); // warm: pools, JIT, the tokenizer-free paths
for (let round = 0; round < ROUNDS; round++) {
  const order = TARGETS.map((_, i) => TARGETS[(i + round) % TARGETS.length]);
  for (const target of order) {
    const sample = samples.get(target.label);
    const cpuBefore = target.pid ? cpuMs(target.pid) : 0;
    for (let n = 0; n < REQUESTS; n++) {
      const { ms, bytes } = await once(target);
      sample.ms.push(ms);
      sample.bytes = bytes;
    }
    if (target.pid) sample.cpu.push((cpuMs(target.pid) - cpuBefore) / REQUESTS);
  }
}

const direct = median(samples.get('direct').ms);
const rows = TARGETS.map((t) => {
  const s = samples.get(t.label);
  const ms = median(s.ms);
  return {
    target: t.label,
    answer_mb: +(s.bytes / 1e6).toFixed(2),
    median_ms: +ms.toFixed(2),
    added_ms: +(ms - direct).toFixed(2),
    cpu_ms_per_request: t.pid ? +median(s.cpu).toFixed(2) : null,
  };
});
const pipeRow = rows[1];
const relayRow = rows[2];
const result = {
  inputs: INPUTS,
  width: WIDTH,
  rounds: ROUNDS,
  requests_per_round: REQUESTS,
  rows,
  relay_vs_pipe_time: +(relayRow.median_ms / pipeRow.median_ms).toFixed(3),
  relay_vs_pipe_added: +(relayRow.added_ms / pipeRow.added_ms).toFixed(3),
  relay_vs_pipe_cpu: +(relayRow.cpu_ms_per_request / pipeRow.cpu_ms_per_request).toFixed(3),
};
await stopAll();
if (argv.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  process.stdout.write(`${INPUTS} inputs × ${WIDTH} floats, ${ROUNDS} rounds × ${REQUESTS} requests (median, one at a time)\n\n`);
  process.stdout.write('| target | answer MB | median ms | added ms | CPU ms/request |\n|---|---|---|---|---|\n');
  for (const r of rows) process.stdout.write(`| ${r.target} | ${r.answer_mb} | ${r.median_ms} | ${r.added_ms} | ${r.cpu_ms_per_request ?? '–'} |\n`);
  process.stdout.write(
    `\nllm-route relay / json pipe: time ${result.relay_vs_pipe_time}×, added time ${result.relay_vs_pipe_added}×, CPU ${result.relay_vs_pipe_cpu}× (goal: time ≤ 1.2×)\n`,
  );
}
