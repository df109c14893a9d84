#!/usr/bin/env node
// TTFT with and without a hedge (routes.<r>.hedge_ms) when the first tier's prefill stalls.
// Two `llm-route mock`s: `local` (first content after 200 ms, but a share of its answers stall
// for good: a prefill queued behind another session) and `cloud` (first content after 300 ms),
// behind one `llm-route serve` with two routes on the same tiers: `plain` (failover after the
// local tier's ttft_ms: 3000) and `hedged` (hedge_ms: 500). Then the same with a local tier
// whose every prefill takes 3 s (--ttft-ms 3000).
//
//   npm run build && node bench/hedge.mjs [--requests N] [--stall-rate R] [--concurrency N]
//
// Reported: client-side TTFT p50 / p99 (request sent → first content byte), per route, and how
// many requests each upstream saw (what a hedge costs).
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { installCleanup, startMock, startServeWith, stopAll } from './overhead/processes.mjs';

const { values: argv } = parseArgs({ options: { requests: { type: 'string' }, 'stall-rate': { type: 'string' }, concurrency: { type: 'string' } } });
const REQUESTS = Number(argv.requests ?? 200);
const STALL_RATE = Number(argv['stall-rate'] ?? 0.1);
const CONCURRENCY = Number(argv.concurrency ?? 8);

installCleanup();

async function scenario(title, localFlags) {
  const local = await startMock('local', ['--tokens', '20', ...localFlags]);
  const cloud = await startMock('cloud', ['--tokens', '20', '--ttft-ms', '300']);
  const tiers = '[{ provider: local, model: m, timeouts: { ttft_ms: 3000 } }, { provider: cloud, model: m }]';
  const serve = await startServeWith({
    providers: { local: local.url, cloud: cloud.url },
    routes: [`  plain: { tiers: ${tiers}, retry: { attempts: 1 } }`, `  hedged: { tiers: ${tiers}, retry: { attempts: 1 }, hedge_ms: 500 }`],
    tmpPrefix: 'llm-route-hedge-bench-',
  });
  const origin = new URL(serve.url).origin;
  console.log(`\n${title}`);
  for (const route of ['plain', 'hedged']) {
    const ttfts = await run(origin, route);
    const winners = ttfts.winners;
    console.log(
      `  ${route.padEnd(7)} TTFT p50 ${pct(ttfts.ms, 50)} ms, p99 ${pct(ttfts.ms, 99)} ms, max ${Math.round(Math.max(...ttfts.ms))} ms; answered by ${Object.entries(
        winners,
      )
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}`,
    );
  }
  await stopAll();
}

async function run(origin, route) {
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const body = JSON.stringify({ model: route, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const ms = [];
  const winners = {};
  let next = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      next++;
      const started = performance.now();
      const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body });
      let first = null;
      for await (const chunk of res.body) {
        if (first === null && chunk.includes('"content":"')) first = performance.now() - started;
      }
      if (res.statusCode !== 200 || first === null) throw new Error(`HTTP ${res.statusCode} without content on ${route}`);
      ms.push(first);
      const tier = res.headers['x-llm-route-tier'];
      winners[tier] = (winners[tier] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await pool.close();
  return { ms, winners };
}

function pct(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);
}

try {
  await scenario(`local: 200 ms TTFT, ${STALL_RATE * 100}% of prefills stalled (ttft_ms 3000); cloud: 300 ms — ${REQUESTS} streams, ${CONCURRENCY} at once`, [
    '--ttft-ms',
    '200',
    '--stall-rate',
    String(STALL_RATE),
  ]);
  await scenario(`local: every prefill takes 3 s; cloud: 300 ms — ${REQUESTS} streams, ${CONCURRENCY} at once`, ['--ttft-ms', '2900']);
} finally {
  await stopAll();
}
