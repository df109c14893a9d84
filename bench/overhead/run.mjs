#!/usr/bin/env node
// The overhead benchmark: direct calls to a fast upstream vs the same calls through llm-route vs
// through a peer gateway (Portkey's open-source gateway), all on loopback, each server in its own
// process. `npm run bench:overhead` builds dist/ first; see bench/RESULTS.md for a run and
// bench/profile.md for profiling the proxy under this load.
//
//   node bench/overhead/run.mjs [--quick] [--rounds N] [--duration S] [--no-pipe] [--no-peer]
//                               [--only nonstream,cpu,stream,failover,open,upstream]
//                               [--json FILE] [--md FILE]
//   node bench/overhead/run.mjs --from-json FILE    (re-print the report of an earlier --json run)
//   node bench/overhead/run.mjs --profile DIR [--duration S]   (llm-route under --cpu-prof, c10 load)
import { writeFileSync, mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { runLoad } from './load.mjs';
import { clockTicks, EXACT_CPU, openFileLimit, rssKb, systemBusyMs } from './procfs.mjs';
import { installCleanup, ourCpuMs, startMock, startPortkey, startScript, startServe, stopAll, ROOT, PORTKEY_BIN } from './processes.mjs';
import { median, medianOfRounds } from './stats.mjs';
import { openStreams, sequentialStreams } from './streams.mjs';
import { JSON_PIPE, renderReport, USAGE_OFF } from './report.mjs';

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    only: { type: 'string' },
    'no-pipe': { type: 'boolean', default: false },
    'no-peer': { type: 'boolean', default: false },
    json: { type: 'string' },
    md: { type: 'string' },
    profile: { type: 'string' },
    'from-json': { type: 'string' },
  },
});

// --from-json FILE: print the Markdown report of an earlier run's --json output, run nothing.
if (argv['from-json']) {
  process.stdout.write(`${renderReport(JSON.parse(readFileSync(argv['from-json'], 'utf8')))}\n`);
  process.exit(0);
}

const quick = argv.quick;
const plan = {
  rounds: Number(argv.rounds ?? (quick ? 1 : 3)),
  durationS: Number(argv.duration ?? (quick ? 1.5 : 3)),
  warmS: quick ? 0.5 : 1,
  concurrency: [1, 10, 100],
  cpuAmount: quick ? 2000 : 4000,
  streamCount: quick ? 60 : 200,
  streamMaxS: quick ? 4 : 8,
  failoverCount: quick ? 40 : 100,
  failoverMaxS: quick ? 3 : 6,
  openCount: 1000,
  openRounds: 1,
  slowTokens: quick ? 10 : 20,
  slowTokensPerS: 2,
  fastTokens: 100,
};
if (!(plan.rounds >= 1 && Number.isInteger(plan.rounds)) || !(plan.durationS > 0)) {
  console.error('--rounds must be a whole number >= 1 and --duration a number of seconds > 0');
  process.exit(2);
}
const SECTIONS = ['upstream', 'nonstream', 'cpu', 'stream', 'failover', 'open'];
const sections = new Set((argv.only ?? SECTIONS.join(',')).split(','));
for (const s of sections) {
  if (!SECTIONS.includes(s)) {
    console.error(`--only: unknown section "${s}" (sections: ${SECTIONS.join(', ')})`);
    process.exit(2);
  }
}
const withPeer = !argv['no-peer'];
const withPipe = !argv['no-pipe'];

installCleanup();
const started = Date.now();
const log = (msg) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);

if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  console.error('dist/ is missing: run `npm run build` first (npm run bench:overhead does).');
  process.exit(2);
}

const tmp = mkdtempSync(join(os.tmpdir(), 'llm-route-bench-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true })); // also after Ctrl-C
try {
  if (argv.profile) await profileMode(argv.profile);
  else await main();
} finally {
  log('stopping child processes');
  await stopAll();
}

async function main() {
  const env = environment();
  if (env.openFiles < 4 * plan.openCount) {
    log(`warning: ulimit -n is ${env.openFiles}; ${plan.openCount} open streams need about ${3 * plan.openCount} descriptors in the proxy`);
  }
  log(`plan: ${JSON.stringify(plan)}`);

  // --- processes -----------------------------------------------------------------------------
  const fast = await startMock('fast', ['--tokens', String(plan.fastTokens)]);
  const slow = await startMock('slow', ['--tokens', String(plan.slowTokens), '--tokens-per-s', String(plan.slowTokensPerS)]);
  const tierFile = writeTierFile(fast.url, slow.url, { path: join(tmp, 'usage.db') });
  const proxy = await startServe(tierFile);
  // The same proxy with the usage log off: what the log costs, measured in the same run.
  const proxyOff = await startServe(writeTierFile(fast.url, slow.url, { enabled: false }, 'tiers-usage-off.yaml'));
  const peer = withPeer ? await startPortkey() : null;
  const pipe = withPipe ? await startScript('naive pipe', './naive-pipe.mjs', [fast.url]) : null;
  const jsonPipe = withPipe ? await startScript('json pipe', './json-pipe.mjs', [fast.url, 'm']) : null;
  log(
    `fast mock ${fast.url} (pid ${fast.pid}), slow mock ${slow.url}, llm-route ${proxy.url} (pid ${proxy.pid})` +
      (peer ? `, peer ${peer.url} (pid ${peer.pid})` : '') +
      (pipe ? `, naive pipe ${pipe.url}, json pipe ${jsonPipe.url}` : ''),
  );

  const body = (model, stream) => JSON.stringify({ model, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: 'Say hello.' }] });
  const peerHeaders = (upstreamUrl) => ({
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': upstreamUrl,
    authorization: 'Bearer unused',
  });
  const T = {
    direct: { name: 'direct', url: fast.url, headers: {}, model: 'm', pid: null },
    llm: { name: 'llm-route', url: proxy.url, headers: {}, model: 'bench', pid: proxy.pid },
    llmOff: { name: USAGE_OFF, url: proxyOff.url, headers: {}, model: 'bench', pid: proxyOff.pid },
    ...(peer ? { peer: { name: 'peer', url: peer.url, headers: peerHeaders(fast.url), model: 'm', pid: peer.pid } } : {}),
    ...(pipe ? { pipe: { name: 'naive pipe', url: pipe.url, headers: {}, model: 'm', pid: pipe.pid } } : {}),
    ...(jsonPipe ? { jsonPipe: { name: JSON_PIPE, url: jsonPipe.url, headers: {}, model: 'x', pid: jsonPipe.pid } } : {}),
  };
  for (const t of Object.values(T)) {
    t.body = body(t.model, false);
    t.streamBody = body(t.model, true);
  }
  await sanityCheck(T);

  const results = { env, plan, startedAt: new Date(started).toISOString(), otherLoad: {} };
  // How busy the machine was with other work during each section: machine busy time minus the
  // CPU time of this process and its children, in % of one core. High values mean a noisy run.
  let mark;
  const begin = () => (mark = { at: Date.now(), busy: systemBusyMs(), ours: ourCpuMs() });
  const end = (name) => {
    const other = systemBusyMs() - mark.busy - (ourCpuMs() - mark.ours);
    results.otherLoad[name] = Math.max(0, (other / (Date.now() - mark.at)) * 100);
    log(`${name}: other processes used ${results.otherLoad[name].toFixed(0)} % of a core`);
  };

  // --- is the mock fast enough? compare it with a bare node:http server sending the same bytes ---
  if (sections.has('upstream')) {
    begin();
    const sample = await request(`${fast.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: T.direct.body });
    const bytes = Buffer.from(await sample.body.arrayBuffer());
    const bare = await startScript('bare upstream', './bare-upstream.mjs', [bytes.toString('base64')]);
    const bareT = { ...T.direct, name: 'bare node:http', url: bare.url, pid: bare.pid };
    results.upstream = { bodyBytes: bytes.length, rows: [] };
    for (const c of quick ? [100] : [10, 100]) {
      for (const [label, t, pid] of [
        ['mock', T.direct, fast.pid],
        ['bare', bareT, bare.pid],
      ]) {
        await runLoad(t, { connections: c, durationS: 0.5 });
        const res = flat(await runLoad(t, { connections: c, durationS: plan.durationS, cpuPids: { upstream: pid } }));
        results.upstream.rows.push({ label, connections: c, ...res });
        log(
          `upstream check ${label} c${c}: ${Math.round(res.rps)} req/s, upstream CPU ${fmt(res.cpu_upstream, 4)} ms/req, load generator CPU ${Math.round(res.clientCpuPct)} %`,
        );
      }
    }
    end('upstream');
    await bare.child.stop();
  }

  // --- non-streaming load at c1 / c10 / c100 ---------------------------------------------------
  const loadTargets = Object.values(T);
  if (sections.has('nonstream')) {
    begin();
    for (const t of loadTargets) await runLoad(t, { connections: 10, durationS: plan.warmS });
    const runs = {};
    for (let r = 0; r < plan.rounds; r++) {
      for (const c of plan.concurrency) {
        for (const t of rotate(loadTargets, r)) {
          const res = flat(await runLoad(t, { connections: c, durationS: plan.durationS, cpuPids: cpuPids(t, fast) }));
          ((runs[c] ??= {})[t.name] ??= []).push(res);
          log(
            `round ${r + 1}/${plan.rounds} c${c} ${t.name}: ${Math.round(res.rps)} req/s, p50 ${res.p50.toFixed(3)} ms, p99 ${res.p99.toFixed(3)} ms` +
              (res.errors + res.non2xx + res.timeouts > 0 ? `, errors ${res.errors} non2xx ${res.non2xx} timeouts ${res.timeouts}` : ''),
          );
          await sleep(200);
        }
      }
    }
    results.nonstream = mapValues(runs, (byTarget) => mapValues(byTarget, (rounds) => ({ ...medianOfRounds(rounds), rounds })));
    end('nonstream');
  }

  // --- proxy CPU per non-streaming request: a fixed number of requests at c10 ------------------
  if (sections.has('cpu')) {
    begin();
    const runs = {};
    for (let r = 0; r < plan.rounds; r++) {
      for (const t of rotate(loadTargets, r)) {
        const res = flat(await runLoad(t, { connections: 10, amount: plan.cpuAmount, cpuPids: cpuPids(t, fast) }));
        (runs[t.name] ??= []).push(res);
        log(
          `cpu round ${r + 1} ${t.name}: proxy ${res.cpu_proxy === undefined ? '-' : fmt(res.cpu_proxy, 4)} ms/req, upstream ${fmt(res.cpu_upstream, 4)} ms/req over ${res.ok} requests`,
        );
        await sleep(200);
      }
    }
    results.cpu = mapValues(runs, (rounds) => ({ ...medianOfRounds(rounds), rounds }));
    end('cpu');
  }

  // --- streaming: 100 content chunks, one stream at a time ----------------------------------------
  const streamTargets = [T.direct, T.llm, T.jsonPipe, T.peer].filter(Boolean);
  if (sections.has('stream')) {
    begin();
    for (const t of streamTargets) await sequentialStreams(t, t.streamBody, { count: 20, maxS: 2 });
    const runs = {};
    for (let r = 0; r < plan.rounds; r++) {
      for (const t of rotate(streamTargets, r)) {
        const res = await sequentialStreams(t, t.streamBody, { count: plan.streamCount, maxS: plan.streamMaxS, expectChunks: plan.fastTokens });
        (runs[t.name] ??= []).push(res);
        log(
          `stream round ${r + 1} ${t.name}: n ${res.n}, ttfb p50 ${fmt(res.ttfbP50)} ms p99 ${fmt(res.ttfbP99)} ms, total p50 ${fmt(res.totalP50)} ms, errors ${res.errors}${res.firstError ? ` (${res.firstError})` : ''}`,
        );
      }
    }
    results.stream = mapValues(runs, (rounds) => ({ ...medianOfRounds(rounds), errors: rounds.reduce((s, x) => s + x.errors, 0), rounds }));
    end('stream');
  }

  // --- failover: first tier refuses the connection (127.0.0.1:1), second tier is the fast mock ---
  if (sections.has('failover')) {
    begin();
    const variants = [
      { ...T.direct, name: 'direct to tier 2' },
      { ...T.llm, name: 'llm-route, one tier', countHeader: 'x-llm-route-attempts' },
      { ...T.llm, name: 'llm-route, failover', model: 'failover', countHeader: 'x-llm-route-attempts' },
      { ...T.llm, name: 'llm-route, failover, default circuit', model: 'failover_circuit', countHeader: 'x-llm-route-attempts' },
      ...(T.peer
        ? [
            { ...T.peer, name: 'peer, one target', countHeader: 'x-portkey-last-used-option-index' },
            {
              ...T.peer,
              name: 'peer, fallback config',
              headers: { 'x-portkey-config': JSON.stringify(portkeyFallbackConfig(fast.url)) },
              countHeader: 'x-portkey-last-used-option-index',
            },
          ]
        : []),
    ];
    for (const v of variants) v.streamBody = body(v.model, true);
    for (const v of variants) await sequentialStreams(v, v.streamBody, { count: 10, maxS: 2 });
    const runs = {};
    for (let r = 0; r < plan.rounds; r++) {
      for (const v of rotate(variants, r)) {
        const res = await sequentialStreams(v, v.streamBody, {
          count: plan.failoverCount,
          maxS: plan.failoverMaxS,
          expectChunks: plan.fastTokens,
          countHeader: v.countHeader,
        });
        (runs[v.name] ??= []).push(res);
        log(
          `failover round ${r + 1} ${v.name}: ttfb p50 ${fmt(res.ttfbP50)} ms p99 ${fmt(res.ttfbP99)} ms, n ${res.n}, errors ${res.errors}` +
            (res.headerCounts ? ` ${v.countHeader} ${JSON.stringify(res.headerCounts)}` : ''),
        );
      }
    }
    results.failover = mapValues(runs, (rounds) => ({
      ...medianOfRounds(rounds),
      errors: rounds.reduce((s, x) => s + x.errors, 0),
      headerCounts: mergeCounts(rounds.map((x) => x.headerCounts)),
      rounds,
    }));
    end('failover');
  }

  // --- 1,000 streams open at once against the slow mock: memory and errors ----------------------
  // Fresh llm-route and peer processes, so the figure does not depend on how far the heap grew
  // (and was or was not given back) during the load sections; that RSS is reported beside it.
  if (sections.has('open')) {
    const rssAfterLoadMb = { [T.llm.name]: rssKb(proxy.pid) / 1024, ...(peer ? { [T.peer.name]: rssKb(peer.pid) / 1024 } : {}) };
    log(
      `RSS after the load sections: ${JSON.stringify(mapValues(rssAfterLoadMb, (v) => +v.toFixed(1)))} MB; starting fresh llm-route${peer ? ' and peer' : ''} for the open-streams section`,
    );
    await Promise.all([proxy.child.stop(), proxyOff.child.stop(), peer?.child.stop(), pipe?.child.stop(), jsonPipe?.child.stop()]);
    const proxy2 = await startServe(tierFile);
    const peer2 = peer ? await startPortkey() : null;
    // The least a router must do, in front of the slow mock: what any Node hop costs 1,000 streams' first content.
    const jsonPipe2 = withPipe ? await startScript('json pipe', './json-pipe.mjs', [slow.url, 'm']) : null;
    begin();
    const openTargets = [
      { ...T.direct, url: slow.url, rssPid: slow.pid, rssOf: 'slow mock (no proxy)' },
      { ...T.llm, url: proxy2.url, model: 'slow', rssPid: proxy2.pid, rssOf: 'llm-route (fresh process)' },
      ...(jsonPipe2 ? [{ ...T.jsonPipe, url: jsonPipe2.url, rssPid: jsonPipe2.pid, rssOf: 'json pipe (fresh process)' }] : []),
      ...(peer2 ? [{ ...T.peer, url: peer2.url, headers: peerHeaders(slow.url), rssPid: peer2.pid, rssOf: 'peer (fresh process)' }] : []),
    ];
    // A few fast streams first, so each fresh process has served something before its idle RSS is read.
    // (The json pipe fronts only the slow mock, so it is not warmed: its few lines need little.)
    for (const t of [{ ...T.llm, url: proxy2.url }, ...(peer2 ? [{ ...T.peer, url: peer2.url }] : [])]) {
      await sequentialStreams(t, t.streamBody, { count: 20, maxS: 5 });
    }
    const runs = {};
    for (let r = 0; r < plan.openRounds; r++) {
      for (const t of openTargets) {
        const res = await openStreams(t, body(t.model, true), {
          count: plan.openCount,
          expectChunks: plan.slowTokens,
          rssPid: t.rssPid,
          maxS: 30 + plan.slowTokens / plan.slowTokensPerS,
        });
        (runs[t.name] ??= []).push({ ...res, rssOf: t.rssOf });
        log(
          `open streams ${t.name}: ${res.streams} streams, ttfb p50 ${fmt(res.ttfbP50, 1)} ms p99 ${fmt(res.ttfbP99, 1)} ms, load generator CPU ${Math.round(res.clientCpuPct)} %, peak open ${res.peakOpen}, ${t.rssOf} RSS ${res.rssIdleMb.toFixed(1)} -> ${res.rssPeakMb.toFixed(1)} MB, errors ${res.errors} ${JSON.stringify(res.reasons)}`,
        );
        await sleep(500);
      }
    }
    // Memory: the worst round; errors: all rounds together.
    results.open = mapValues(runs, (rounds, name) => ({
      rssOf: rounds[0].rssOf,
      rssAfterLoadMb: rssAfterLoadMb[name],
      streams: rounds[0].streams,
      rssIdleMb: median(rounds.map((x) => x.rssIdleMb)),
      rssPeakMb: Math.max(...rounds.map((x) => x.rssPeakMb)),
      peakOpen: Math.min(...rounds.map((x) => x.peakOpen)),
      errors: rounds.reduce((s, x) => s + x.errors, 0),
      reasons: mergeCounts(rounds.map((x) => x.reasons)),
      ttfbP50: median(rounds.map((x) => x.ttfbP50)),
      ttfbP99: median(rounds.map((x) => x.ttfbP99)),
      wallS: median(rounds.map((x) => x.wallS)),
      clientCpuPct: median(rounds.map((x) => x.clientCpuPct)),
      rounds,
    }));
    end('open');
  }

  results.proxyLogLines = proxy.child.stdoutLines;
  results.finishedAt = new Date().toISOString();
  results.elapsedS = (Date.now() - started) / 1000;
  const markdown = renderReport(results);
  process.stdout.write(`${markdown}\n`);
  if (argv.md) writeFileSync(argv.md, `${markdown}\n`);
  if (argv.json) writeFileSync(argv.json, `${JSON.stringify(results, null, 2)}\n`);
  log(`done in ${results.elapsedS.toFixed(0)} s`);
}

/** llm-route under `node --cpu-prof` with the non-streaming c10 load; the profile is written when it exits. */
async function profileMode(dir) {
  const fast = await startMock('fast', ['--tokens', String(plan.fastTokens)]);
  const slow = await startMock('slow', ['--tokens', '2']);
  const proxy = await startServe(writeTierFile(fast.url, slow.url), { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const target = { url: proxy.url, headers: {}, body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Say hello.' }] }) };
  await runLoad(target, { connections: 10, durationS: 1 });
  const durationS = Number(argv.duration ?? 10);
  log(`profiling llm-route (pid ${proxy.pid}): c10 non-streaming for ${durationS} s`);
  const res = await runLoad(target, { connections: 10, durationS, cpuPids: { proxy: proxy.pid } });
  log(`${Math.round(res.rps)} req/s, p50 ${res.p50.toFixed(3)} ms, proxy CPU ${res.cpuMsPerRequest.proxy.toFixed(4)} ms/req`);
  await proxy.child.stop();
  log(`profile written to ${dir} (summarise: node bench/overhead/profile-summary.mjs ${dir}/*.cpuprofile)`);
}

/** `usage`: the tier file's usage block; the log never goes to the real state dir from here. */
function writeTierFile(fastUrl, slowUrl, usage = { path: join(tmp, 'usage.db') }, name = 'tiers.yaml') {
  // `dead` refuses connections. Its circuit never opens on the `failover` route, so every request
  // really tries it first; `failover_circuit` keeps the default circuit (it opens after 3 failures).
  const yaml = `version: 1
server:
  host: 127.0.0.1
  port: 0
providers:
  fast: { type: openai, base_url: "${fastUrl}" }
  slow: { type: openai, base_url: "${slowUrl}" }
  dead: { type: openai, base_url: "http://127.0.0.1:1/v1" }
  dead2: { type: openai, base_url: "http://127.0.0.1:1/v1" }
routes:
  bench:
    tiers:
      - { name: fast, provider: fast, model: m }
  slow:
    tiers:
      - { name: slow, provider: slow, model: m }
  failover:
    tiers:
      - { name: dead, provider: dead, model: m, retry: { attempts: 1 }, circuit: { failures: 1000000 } }
      - { name: fast, provider: fast, model: m }
  failover_circuit:
    tiers:
      - { name: dead, provider: dead2, model: m, retry: { attempts: 1 } }
      - { name: fast, provider: fast, model: m }
usage: ${JSON.stringify(usage)}
`;
  const file = join(tmp, name);
  writeFileSync(file, yaml);
  return file;
}

function portkeyFallbackConfig(fastUrl) {
  return {
    strategy: { mode: 'fallback' },
    targets: [
      { provider: 'openai', api_key: 'unused', custom_host: 'http://127.0.0.1:1/v1' },
      { provider: 'openai', api_key: 'unused', custom_host: fastUrl },
    ],
  };
}

/** Every target answers a plain and a streaming request correctly before anything is measured. */
async function sanityCheck(targets) {
  for (const t of Object.values(targets)) {
    const res = await request(`${t.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: t.body });
    const json = await res.body.json();
    if (res.statusCode !== 200 || !json.choices?.[0]?.message?.content?.startsWith('[fast]')) {
      throw new Error(`${t.name}: unexpected answer ${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`);
    }
    const s = await sequentialStreams(t, t.streamBody, { count: 1, maxS: 5, expectChunks: plan.fastTokens });
    if (s.errors > 0 || s.n !== 1) throw new Error(`${t.name}: streaming check failed: ${s.firstError}`);
  }
}

function cpuPids(t, fast) {
  return { ...(t.pid ? { proxy: t.pid } : {}), upstream: fast.pid };
}

/** Flattens runLoad's nested CPU figures so medianOfRounds sees plain numbers. */
function flat(res) {
  const { cpuMsPerRequest, ...rest } = res;
  return { ...rest, ...Object.fromEntries(Object.entries(cpuMsPerRequest).map(([k, v]) => [`cpu_${k}`, v])) };
}

function rotate(list, by) {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

function mapValues(obj, fn) {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fn(v, k)]));
}

function mergeCounts(list) {
  const out = {};
  for (const counts of list) for (const [k, v] of Object.entries(counts ?? {})) out[k] = (out[k] ?? 0) + v;
  return out;
}

function fmt(x, digits = 2) {
  return Number.isFinite(x) ? x.toFixed(digits) : String(x);
}

function environment() {
  const pkg = (path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    node: process.version,
    llmRoute: pkg('package.json').version,
    peer: `@portkey-ai/gateway ${pkg('node_modules/@portkey-ai/gateway/package.json').version}`,
    peerHonoNodeServer: ['node_modules/@portkey-ai/gateway/node_modules/@hono/node-server/package.json', 'node_modules/@hono/node-server/package.json']
      .filter((path) => existsSync(join(ROOT, path)))
      .map((path) => pkg(path).version)[0],
    autocannon: pkg('node_modules/autocannon/package.json').version,
    undici: pkg('node_modules/undici/package.json').version,
    nproc: os.availableParallelism(),
    cpuModel: cpus[0]?.model,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()}`,
    loadavg: os.loadavg().map((x) => +x.toFixed(2)),
    openFiles: openFileLimit(),
    clockTicks: clockTicks(),
    exactCpu: EXACT_CPU,
    peerBin: PORTKEY_BIN.slice(ROOT.length),
  };
}
