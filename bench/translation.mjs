#!/usr/bin/env node
// The cost of translation: an Anthropic Messages client on an openai-type tier (every upstream
// event decoded and rendered as Anthropic events) against a Chat Completions client on the same
// tier (the byte relay), through one `llm-route serve`, in the same run.
//
//   npm run build && node bench/translation.mjs [--streams N] [--tokens N] [--rounds N]
//
// Reported per protocol: proxy CPU per upstream event (utime+stime of the serve process over the
// run / events relayed) and time to first content (p50, p99) from the client's side; then the
// ratios translated / relayed. Direct calls to the mock give the floor for time to first content.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { cpuMs } from './overhead/procfs.mjs';
import { installCleanup, startServeOnMock, stopAll } from './overhead/processes.mjs';
import { percentile } from './overhead/stats.mjs';

const { values: argv } = parseArgs({
  options: { streams: { type: 'string' }, tokens: { type: 'string' }, rounds: { type: 'string' } },
});
const STREAMS = Number(argv.streams ?? 300);
const TOKENS = Number(argv.tokens ?? 100);
const ROUNDS = Number(argv.rounds ?? 3);

installCleanup();
const { mock, serve } = await startServeOnMock({
  tokens: TOKENS,
  tmpPrefix: 'llm-route-translation-',
  routes: ['  chat:', '    tiers: [{ provider: fast, model: m }]'],
});

const CASES = {
  direct: { origin: new URL(mock.url).origin, path: '/v1/chat/completions', body: chatBody(), first: chatContent },
  relay: { origin: new URL(serve.url).origin, path: '/v1/chat/completions', body: chatBody(), first: chatContent },
  translated: {
    origin: new URL(serve.url).origin,
    path: '/v1/messages',
    body: JSON.stringify({ model: 'chat', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    first: messagesContent,
  },
};

function chatBody() {
  return JSON.stringify({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] });
}

function chatContent(data) {
  return data.includes('"content":"') && !data.includes('"content":""');
}

function messagesContent(data) {
  return data.includes('"type":"content_block_delta"');
}

/** One streaming request: ms to the first content event, and the number of events. */
async function once(pool, target) {
  const t0 = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: target.path,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: target.body,
  });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${await res.body.text()}`);
  let firstMs = Number.NaN;
  let events = 0;
  let rest = '';
  res.body.setEncoding('utf8');
  for await (const text of res.body) {
    rest += text;
    let end;
    while ((end = rest.indexOf('\n\n')) !== -1) {
      const event = rest.slice(0, end);
      rest = rest.slice(end + 2);
      events++;
      if (Number.isNaN(firstMs) && target.first(event)) firstMs = performance.now() - t0;
    }
  }
  return { firstMs, events };
}

async function run(name) {
  const target = CASES[name];
  const pool = new Pool(target.origin, { connections: 1, pipelining: 1 });
  for (let i = 0; i < 20; i++) await once(pool, target); // warm-up
  const cpuBefore = name === 'direct' ? 0 : cpuMs(serve.pid);
  const firsts = [];
  let events = 0;
  for (let i = 0; i < STREAMS; i++) {
    const result = await once(pool, target);
    firsts.push(result.firstMs);
    events += result.events;
  }
  const cpu = name === 'direct' ? Number.NaN : cpuMs(serve.pid) - cpuBefore;
  await pool.close();
  firsts.sort((a, b) => a - b);
  return { name, p50: percentile(firsts, 50), p99: percentile(firsts, 99), cpuPerEventUs: (cpu * 1000) / (STREAMS * (TOKENS + 3)), events };
}

const rounds = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    // Alternate the order, so neither case always runs on a warmer machine.
    for (const name of r % 2 === 0 ? ['direct', 'relay', 'translated'] : ['translated', 'relay', 'direct']) round[name] = await run(name);
    rounds.push(round);
    const { direct, relay, translated } = round;
    console.log(
      `round ${r + 1}: first content p50 direct ${direct.p50.toFixed(3)} ms, relay ${relay.p50.toFixed(3)} ms, translated ${translated.p50.toFixed(3)} ms; ` +
        `proxy CPU per upstream event relay ${relay.cpuPerEventUs.toFixed(2)} µs, translated ${translated.cpuPerEventUs.toFixed(2)} µs`,
    );
  }
} finally {
  await stopAll();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const m = (name, key) => median(rounds.map((round) => round[name][key]));
console.log('');
console.log(`${STREAMS} streams of ${TOKENS} content events per case and round, ${ROUNDS} rounds, medians:`);
console.log(
  `  first content p50: direct ${m('direct', 'p50').toFixed(3)} ms, relay ${m('relay', 'p50').toFixed(3)} ms (+${(m('relay', 'p50') - m('direct', 'p50')).toFixed(3)}), translated ${m('translated', 'p50').toFixed(3)} ms (+${(m('translated', 'p50') - m('relay', 'p50')).toFixed(3)} over relay)`,
);
console.log(`  first content p99: relay ${m('relay', 'p99').toFixed(3)} ms, translated ${m('translated', 'p99').toFixed(3)} ms`);
console.log(
  `  proxy CPU per upstream event: relay ${m('relay', 'cpuPerEventUs').toFixed(2)} µs, translated ${m('translated', 'cpuPerEventUs').toFixed(2)} µs → ${(m('translated', 'cpuPerEventUs') / m('relay', 'cpuPerEventUs')).toFixed(2)}× the relay`,
);
console.log("  (CPU is the serve process's utime+stime, 10 ms ticks, over the whole case: request handling included)");
