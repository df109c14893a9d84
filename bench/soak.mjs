#!/usr/bin/env node
// The chaos soak (`npm run soak`, not part of npm test): 10,000 requests, the three client protocols,
// streamed and whole, 50 at a time, through llm-route (in this process, so its sockets, handles and
// memory can be inspected) to a first tier of `llm-route mock` with every fault on at seeded rates
// and a healthy second tier. Every answer is checked (see soak/answers.mjs); afterwards: no upstream
// socket, handle or timer left, RSS back within 10 % of its post-warm-up level, no configured secret
// in any line of output. Prints the numbers; exits 1 when a check fails.
//
//   node --expose-gc bench/soak.mjs [--requests N] [--concurrency N] [--warmup N] [--seed N] [--json FILE]
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { createRandom } from '../dist/mock/random.js';
import { installCleanup, ROOT, startMock, stopAll } from './overhead/processes.mjs';
import { mockTokens, readAnswer } from './soak/answers.mjs';
import { activeResources, grownResources, ownTcpSockets, settledRssMiB } from './soak/resources.mjs';

const { values: argv } = parseArgs({
  options: {
    requests: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    json: { type: 'string' },
  },
});
const plan = { requests: Number(argv.requests), concurrency: Number(argv.concurrency), warmup: Number(argv.warmup), seed: Number(argv.seed) };
if (![plan.requests, plan.concurrency, plan.warmup, plan.seed].every(Number.isInteger) || plan.warmup >= plan.requests) {
  console.error('--requests, --concurrency, --warmup and --seed are whole numbers, and --warmup < --requests');
  process.exit(2);
}
if (!existsSync(join(ROOT, 'dist/server/server.js'))) {
  console.error('dist/ is missing: run `npm run build` first (npm run soak does).');
  process.exit(2);
}
const { loadConfig } = await import(join(ROOT, 'dist/config/load.js'));
const { ProxyServer } = await import(join(ROOT, 'dist/server/server.js'));
const { percentile } = await import(join(ROOT, 'dist/util/percentile.js'));

installCleanup();
const started = performance.now();
const log = (msg) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
// Everything written to stderr is kept: no secret may appear in it.
const stderrLines = [];
const writeStderr = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  stderrLines.push(String(chunk));
  return writeStderr(chunk, ...rest);
};

const TOKENS = 20;
const ENDPOINTS = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };
const FAULTS = [
  '--ttft-ms',
  '5:60',
  '--tokens-per-s',
  '500',
  '--fail-rate',
  '0.05',
  '--fail-status',
  '503',
  '--stall-rate',
  '0.02',
  '--die-rate',
  '0.03',
  '--malformed-rate',
  '0.01',
];
const secrets = { auth_token: `tok-soak-${hex()}`, first_key: `sk-soak-first-${hex()}`, second_key: `sk-soak-second-${hex()}` };
const tmp = mkdtempSync(join(os.tmpdir(), 'llm-route-soak-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const first = await startMock('first', ['--seed', String(plan.seed), '--tokens', String(TOKENS), ...FAULTS]);
const second = await startMock('second', ['--tokens', String(TOKENS), '--ttft-ms', '2:20', '--tokens-per-s', '1000']);
const mockOutput = [];
for (const m of [first, second]) for (const s of [m.child.proc.stdout, m.child.proc.stderr]) s.on('data', (d) => mockOutput.push(String(d)));
const completions = { first: mockTokens('first', TOKENS), second: mockTokens('second', TOKENS) };
await checkMockWords(second.url, completions.second.join(''));
log(`mocks: first ${first.url} (${FAULTS.join(' ')}), second ${second.url} (healthy)`);

const tierFile = join(tmp, 'llm-route.yaml');
writeFileSync(
  tierFile,
  [
    'version: 1',
    'server: { port: 0, auth_token: "${SOAK_TOKEN}" }',
    `usage: { path: ${join(tmp, 'usage.db')} }`,
    'providers:',
    `  first: { type: openai, base_url: "${first.url}", api_key: "\${SOAK_KEY_FIRST}" }`,
    `  second: { type: openai, base_url: "${second.url}", api_key: "\${SOAK_KEY_SECOND}" }`,
    'routes:',
    '  soak:',
    '    tiers:',
    '      - { name: first, provider: first, model: m1, timeouts: { ttft_ms: 400, idle_ms: 400, total_ms: 3000 } }',
    '      - { name: second, provider: second, model: m2 }',
    '',
  ].join('\n'),
);
const config = loadConfig(tierFile, { ...process.env, SOAK_TOKEN: secrets.auth_token, SOAK_KEY_FIRST: secrets.first_key, SOAK_KEY_SECOND: secrets.second_key });

void process.stdout; // created on first use: its handle belongs in the baseline
const baseline = activeResources();
const logLines = [];
const requestLog = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line) logLines.push(line);
    done();
  },
});
const proxy = new ProxyServer({ config, port: 0, log: requestLog });
const { url: proxyUrl, port: proxyPort } = await proxy.listen();
const agent = new Agent({ connections: plan.concurrency, pipelining: 1 });
log(`llm-route ${proxyUrl}; ${plan.requests} requests, ${plan.concurrency} concurrent, seed ${plan.seed}`);

// ---- the run ------------------------------------------------------------------------------
const random = createRandom(plan.seed);
const PROTOCOLS = ['chat', 'responses', 'messages'];
const specs = Array.from({ length: plan.requests }, (_, i) => ({ i, protocol: PROTOCOLS[Math.floor(random() * 3)], stream: random() < 0.5 }));
const results = [];
const violations = [];
const violate = (r, problem) => violations.push(`#${r.i} ${r.protocol}${r.stream ? ' stream' : ''} ${r.id ?? ''}: ${problem}`);

const warmStarted = performance.now();
await runAll(specs.slice(0, plan.warmup));
const warmMs = performance.now() - warmStarted;
await until(() => proxy.app.inFlight.size === 0, 5000);
const rssWarm = await settledRssMiB();
log(`warm-up: ${plan.warmup} requests in ${(warmMs / 1000).toFixed(1)} s; RSS ${rssWarm.toFixed(1)} MiB`);

const mainStarted = performance.now();
await runAll(specs.slice(plan.warmup));
const mainMs = performance.now() - mainStarted;
await until(() => proxy.app.inFlight.size === 0 && proxy.app.streams.open === 0, 5000);
const rssAfter = await settledRssMiB();
log(`main: ${plan.requests - plan.warmup} requests in ${(mainMs / 1000).toFixed(1)} s; RSS ${rssAfter.toFixed(1)} MiB`);

// ---- after the run: the request log agrees with every answer ------------------------------------
const byId = new Map(
  logLines
    .map((l) => JSON.parse(l))
    .filter((l) => l.event === 'request')
    .map((l) => [l.id, l]),
);
const attemptOutcomes = {};
let chunkErrors = 0;
for (const r of results) {
  const line = byId.get(r.id);
  if (!line) {
    violate(r, 'no request log line');
    continue;
  }
  if (line.status !== r.status) violate(r, `logged status ${line.status}, answered ${r.status}`);
  const expected = { complete: 'ok', interrupted: 'interrupted' }[r.kind];
  if (expected && line.outcome !== expected) violate(r, `${r.kind} answer logged as ${line.outcome}`);
  if (r.kind === 'error' && line.outcome === 'ok') violate(r, 'an error logged as ok');
  if (r.kind === 'complete' && r.dropped !== null && r.dropped !== (line.chunk_errors ?? 0))
    violate(r, `a complete answer lacks ${r.dropped} token(s) but ${line.chunk_errors ?? 0} chunk error(s) were logged (truncated as a success?)`);
  if (line.tier !== null && line.tier !== r.tier) violate(r, `logged tier ${line.tier}, header says ${r.tier}`);
  chunkErrors += line.chunk_errors ?? 0;
  for (const a of line.attempts) attemptOutcomes[`${a.tier}:${a.outcome}`] = (attemptOutcomes[`${a.tier}:${a.outcome}`] ?? 0) + 1;
}

// ---- leaks: sockets, handles, timers; then memory; then secrets --------------------------------
const mockPorts = new Set([Number(new URL(first.url).port), Number(new URL(second.url).port)]);
const upstreamSockets = () => ownTcpSockets().filter((s) => mockPorts.has(s.remotePort));
const idleUpstream = upstreamSockets();
await agent.close();
await proxy.close(2000);
await until(() => upstreamSockets().length === 0 && ownTcpSockets().every((s) => s.localPort !== proxyPort && s.remotePort !== proxyPort), 3000);
const leftSockets = ownTcpSockets();
const leftUpstream = leftSockets.filter((s) => mockPorts.has(s.remotePort));
const leftProxy = leftSockets.filter((s) => s.localPort === proxyPort || s.remotePort === proxyPort);
await until(() => Object.keys(grownResources(baseline, activeResources())).length === 0, 3000);
const leftResources = grownResources(baseline, activeResources());
if (leftUpstream.length > 0) violations.push(`${leftUpstream.length} upstream socket(s) open after close: ${JSON.stringify(leftUpstream)}`);
if (leftProxy.length > 0) violations.push(`${leftProxy.length} proxy socket(s) open after close`);
if (Object.keys(leftResources).length > 0) violations.push(`handles or timers left after close: ${JSON.stringify(leftResources)}`);
const rssGrowth = (rssAfter - rssWarm) / rssWarm;
if (Math.abs(rssGrowth) > 0.1)
  violations.push(`RSS ${rssAfter.toFixed(1)} MiB after the run vs ${rssWarm.toFixed(1)} MiB after warm-up (${(rssGrowth * 100).toFixed(1)} %)`);
await stopAll();

const latencies = results.map((r) => r.totalMs).sort((a, b) => a - b);
const ttfts = results
  .filter((r) => r.stream && r.status === 200)
  .map((r) => r.headersMs)
  .sort((a, b) => a - b);
const count = (pred) => results.filter(pred).length;
const report = {
  plan: { ...plan, faults: FAULTS.join(' '), tokens: TOKENS },
  wallS: (performance.now() - started) / 1000,
  warmupS: warmMs / 1000,
  mainS: mainMs / 1000,
  throughputRps: (plan.requests - plan.warmup) / (mainMs / 1000),
  latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: latencies.at(-1) },
  streamHeadersMs: { p50: percentile(ttfts, 50), p99: percentile(ttfts, 99) },
  answers: {
    complete: count((r) => r.kind === 'complete'),
    interrupted: count((r) => r.kind === 'interrupted'),
    errors: Object.fromEntries(
      Object.entries(
        groupCount(
          results.filter((r) => r.kind === 'error'),
          (r) => r.status,
        ),
      ),
    ),
    byTier: groupCount(
      results.filter((r) => r.status === 200),
      (r) => r.tier,
    ),
    byProtocol: groupCount(results, (r) => `${r.protocol} ${r.stream ? 'stream' : 'whole'}`),
    failedOver: results.filter((r) => byId.get(r.id)?.attempts.some((a) => a.tier === 'first' && a.outcome !== 'ok') && r.tier === 'second').length,
  },
  attempts: attemptOutcomes,
  chunkErrors,
  leaks: {
    idleUpstreamSocketsBeforeClose: idleUpstream.length,
    upstreamSocketsAfterClose: leftUpstream.length,
    proxySocketsAfterClose: leftProxy.length,
    resourcesLeft: leftResources,
  },
  rssMiB: { afterWarmup: round(rssWarm), afterRun: round(rssAfter), growthPct: round(rssGrowth * 100) },
  gc: typeof globalThis.gc === 'function',
  logLines: logLines.length,
  violations: violations.length,
};

// The printed report is output too: it is checked with the rest.
const printed = render(report);
const outputs = [...logLines, ...stderrLines, ...mockOutput, printed];
const leaked = [...new Set(outputs.flatMap(leakedSecrets))];
if (leaked.length > 0) violations.push(`secret(s) ${leaked.join(', ')} found in the output`);
report.secrets = { checked: outputs.length + results.length, leaked };
report.violations = violations.length;
process.stdout.write(`${render(report)}\n`);
if (violations.length > 0)
  process.stdout.write(
    `\nviolations (${violations.length}):\n${violations
      .slice(0, 30)
      .map((v) => `  ${v}`)
      .join('\n')}\n`,
  );
if (argv.json) writeFileSync(argv.json, JSON.stringify({ ...report, violationList: violations }, null, 2));
process.exitCode = violations.length > 0 ? 1 : 0;

// ---- helpers ------------------------------------------------------------------------------

async function runAll(list) {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await one(list[next++]);
  };
  await Promise.all(Array.from({ length: plan.concurrency }, worker));
}

async function one(spec) {
  const r = { ...spec };
  const sentAt = performance.now();
  try {
    const res = await request(`${proxyUrl}${ENDPOINTS[spec.protocol]}`, {
      method: 'POST',
      dispatcher: agent,
      headers: headersFor(spec.protocol),
      body: JSON.stringify(bodyFor(spec)),
    });
    r.headersMs = performance.now() - sentAt;
    r.status = res.statusCode;
    r.id = res.headers['x-request-id'];
    const body = await res.body.text();
    r.totalMs = performance.now() - sentAt;
    // Checked here, not kept: 10,000 answers held to the end would be the memory growth the soak looks for.
    const leaked = leakedSecrets(`${JSON.stringify(res.headers)}\n${body}`);
    if (leaked.length > 0) violate(r, `secret(s) ${leaked.join(', ')} in the answer`);
    const answer = readAnswer({ protocol: spec.protocol, stream: spec.stream, status: res.statusCode, headers: res.headers, body }, completions);
    Object.assign(r, { kind: answer.kind, tier: answer.tier, dropped: answer.dropped ?? null });
    for (const problem of answer.problems) violate(r, problem);
  } catch (err) {
    r.totalMs = performance.now() - sentAt;
    r.kind = 'no_answer';
    violate(r, `no answer: ${err.code ?? err.message}`);
  }
  results.push(r);
}

function headersFor(protocol) {
  const auth =
    protocol === 'messages' ? { 'x-api-key': secrets.auth_token, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${secrets.auth_token}` };
  return { 'content-type': 'application/json', ...auth };
}

function bodyFor({ i, protocol, stream }) {
  const prompt = `soak request ${i}: say something`;
  if (protocol === 'responses') return { model: 'soak', input: prompt, stream };
  if (protocol === 'messages') return { model: 'soak', max_tokens: 64, messages: [{ role: 'user', content: prompt }], stream };
  return { model: 'soak', messages: [{ role: 'user', content: prompt }], stream };
}

/** The words the soak expects are the mock's: checked on the healthy mock before anything runs. */
async function checkMockWords(url, expected) {
  const res = await request(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const text = (await res.body.json()).choices[0].message.content;
  if (text !== expected) throw new Error(`the mock's completion changed: ${JSON.stringify(text)}; update bench/soak/answers.mjs`);
}

async function until(check, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while (!check() && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

function groupCount(list, key) {
  const out = {};
  for (const item of list) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return out;
}

/** The names of the configured secrets that appear in `text`. */
function leakedSecrets(text) {
  return Object.entries(secrets)
    .filter(([, secret]) => text.includes(secret))
    .map(([name]) => name);
}

function hex() {
  return randomBytes(8).toString('hex');
}

function round(n) {
  return Math.round(n * 10) / 10;
}

function render(r) {
  const ms = (n) => `${Math.round(n)} ms`;
  const kv = (o) =>
    Object.entries(o)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  return [
    `llm-route soak: ${r.plan.requests} requests (chat, responses, messages; streamed and whole), ${r.plan.concurrency} concurrent, seed ${r.plan.seed}`,
    `  first tier: llm-route mock ${r.plan.faults}; second tier: a healthy mock`,
    `  wall time          ${r.wallS.toFixed(1)} s (warm-up ${r.plan.warmup} requests in ${r.warmupS.toFixed(1)} s, then ${r.plan.requests - r.plan.warmup} in ${r.mainS.toFixed(1)} s)`,
    `  throughput         ${Math.round(r.throughputRps)} req/s (after warm-up)`,
    `  latency            p50 ${ms(r.latencyMs.p50)}, p90 ${ms(r.latencyMs.p90)}, p99 ${ms(r.latencyMs.p99)}, max ${ms(r.latencyMs.max)} (request sent to last byte)`,
    `  streams, headers   p50 ${ms(r.streamHeadersMs.p50)}, p99 ${ms(r.streamHeadersMs.p99)} (the commit, as the client sees it)`,
    `  answers            complete ${r.answers.complete}, interrupted with the error event ${r.answers.interrupted}, errors ${kv(r.answers.errors)}`,
    `  answered by        ${kv(r.answers.byTier)}; failed over from first: ${r.answers.failedOver}`,
    `  mix                ${kv(r.answers.byProtocol)}`,
    `  attempts           ${kv(r.attempts)}`,
    `  chunk errors       ${r.chunkErrors} malformed events dropped and counted`,
    `  sockets            ${r.leaks.idleUpstreamSocketsBeforeClose} idle upstream keep-alive before close; after close: upstream ${r.leaks.upstreamSocketsAfterClose}, proxy ${r.leaks.proxySocketsAfterClose}`,
    `  handles, timers    left after close: ${kv(r.leaks.resourcesLeft)}`,
    `  memory             RSS ${r.rssMiB.afterWarmup} MiB after warm-up, ${r.rssMiB.afterRun} MiB after the run (${r.rssMiB.growthPct >= 0 ? '+' : ''}${r.rssMiB.growthPct} %)${r.gc ? '' : ' (no --expose-gc: not collected first)'}`,
    `  secrets            ${r.secrets ? (r.secrets.leaked.length === 0 ? `none in ${r.secrets.checked} outputs (${r.logLines} log lines, stderr, mock output, every answer)` : `LEAKED: ${r.secrets.leaked.join(', ')}`) : 'checked below'}`,
    `  invariants         ${r.violations === 0 ? 'all held on every answer' : `${r.violations} VIOLATION(S)`}`,
  ].join('\n');
}
