#!/usr/bin/env node
// A gemini tier's stream beside the other wires', through one `llm-route serve`: a Chat client on
// an openai tier (the byte relay), on an ollama tier and on a gemini tier (both translated), and
// an Anthropic Messages client on the openai and the gemini tier (translated). One bare upstream
// (overhead/stream-upstream.mjs) writes each answer at once in the wire asked, so what is measured
// is the proxy: its CPU per upstream event (the serve process's, over the case) and the time to
// the first content, one stream at a time, in alternating rounds.
//
//   npm run build && node bench/gemini-tier.mjs [--streams 300] [--tokens 100] [--rounds 3]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { cpuMs } from './overhead/procfs.mjs';
import { installCleanup, startScript, startServe, stopAll } from './overhead/processes.mjs';
import { median, percentile } from './overhead/stats.mjs';

const { values: argv } = parseArgs({ options: { streams: { type: 'string' }, tokens: { type: 'string' }, rounds: { type: 'string' } } });
const STREAMS = Number(argv.streams ?? 300);
const TOKENS = Number(argv.tokens ?? 100);
const ROUNDS = Number(argv.rounds ?? 3);

installCleanup();
const upstream = await startScript('stream upstream', './stream-upstream.mjs', [String(TOKENS)]);
const tmp = mkdtempSync(join(tmpdir(), 'llm-route-gemini-tier-'));
const config = join(tmp, 'tiers.yaml');
writeFileSync(
  config,
  [
    'version: 1',
    'server: { port: 0 }',
    `usage: { path: ${JSON.stringify(join(tmp, 'usage.db'))} }`,
    'providers:',
    `  openai: { type: openai, base_url: ${JSON.stringify(`${upstream.url}/v1`)}, health: { warmup: false } }`,
    `  ollama: { type: ollama, base_url: ${JSON.stringify(upstream.url)}, health: { warmup: false } }`,
    `  gemini: { type: gemini, base_url: ${JSON.stringify(upstream.url)}, api_key: bench-key, health: { warmup: false } }`,
    'routes:',
    '  openai: { tiers: [ { provider: openai, model: m } ] }',
    '  ollama: { tiers: [ { provider: ollama, model: m } ] }',
    '  gemini: { tiers: [ { provider: gemini, model: m } ] }',
    '',
  ].join('\n'),
);
const serve = await startServe(config);
const origin = new URL(serve.url).origin;

const messages = [{ role: 'user', content: 'hi' }];
const chatBody = (model) => JSON.stringify({ model, stream: true, messages });
const messagesBody = (model) => JSON.stringify({ model, max_tokens: 1000, stream: true, messages });
const chatContent = (event) => event.includes('"content":"') && !event.includes('"content":""');
const messagesContent = (event) => event.includes('"type":"content_block_delta"');
/** Upstream events per answer: Chat's role, content, finish and usage chunks; Ollama's lines and its done; Gemini's chunks. */
const UPSTREAM_EVENTS = { openai: TOKENS + 3, ollama: TOKENS + 1, gemini: TOKENS };

const CASES = {
  'chat → openai (relay)': { path: '/v1/chat/completions', body: chatBody('openai'), first: chatContent, wire: 'openai' },
  'chat → ollama': { path: '/v1/chat/completions', body: chatBody('ollama'), first: chatContent, wire: 'ollama' },
  'chat → gemini': { path: '/v1/chat/completions', body: chatBody('gemini'), first: chatContent, wire: 'gemini' },
  'messages → openai': { path: '/v1/messages', body: messagesBody('openai'), first: messagesContent, wire: 'openai' },
  'messages → gemini': { path: '/v1/messages', body: messagesBody('gemini'), first: messagesContent, wire: 'gemini' },
};

async function once(pool, target) {
  const t0 = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: target.path,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: target.body,
  });
  if (res.statusCode !== 200) throw new Error(`${target.path}: HTTP ${res.statusCode}: ${await res.body.text()}`);
  let firstMs = Number.NaN;
  let rest = '';
  res.body.setEncoding('utf8');
  for await (const text of res.body) {
    rest += text;
    let end;
    while ((end = rest.indexOf('\n\n')) !== -1) {
      const event = rest.slice(0, end);
      rest = rest.slice(end + 2);
      if (Number.isNaN(firstMs) && target.first(event)) firstMs = performance.now() - t0;
    }
  }
  return firstMs;
}

async function run(name) {
  const target = CASES[name];
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  for (let i = 0; i < 20; i++) await once(pool, target); // warm-up
  const cpuBefore = cpuMs(serve.pid);
  const firsts = [];
  for (let i = 0; i < STREAMS; i++) firsts.push(await once(pool, target));
  const cpu = cpuMs(serve.pid) - cpuBefore;
  await pool.close();
  firsts.sort((a, b) => a - b);
  return { p50: percentile(firsts, 50), p99: percentile(firsts, 99), cpuPerEventUs: (cpu * 1000) / (STREAMS * UPSTREAM_EVENTS[target.wire]) };
}

const names = Object.keys(CASES);
const rounds = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    // Alternate the order, so no case always runs on a warmer machine.
    for (const name of r % 2 === 0 ? names : [...names].reverse()) round[name] = await run(name);
    rounds.push(round);
    console.log(`round ${r + 1}: ${names.map((n) => `${n} ${round[n].cpuPerEventUs.toFixed(2)} µs/event, p50 ${round[n].p50.toFixed(3)} ms`).join('; ')}`);
  }
} finally {
  await stopAll();
}

const m = (name, key) => median(rounds.map((round) => round[name][key]));
console.log('');
console.log(`${STREAMS} streams of ${TOKENS} content events per case and round, ${ROUNDS} rounds, medians:`);
for (const name of names) {
  console.log(
    `  ${name.padEnd(22)} proxy CPU ${m(name, 'cpuPerEventUs').toFixed(2).padStart(6)} µs per upstream event; first content p50 ${m(name, 'p50').toFixed(3)} ms, p99 ${m(name, 'p99').toFixed(3)} ms`,
  );
}
const ratio = (a, b) => (m(a, 'cpuPerEventUs') / m(b, 'cpuPerEventUs')).toFixed(2);
console.log(`  gemini ÷ ollama translated for a Chat client: ${ratio('chat → gemini', 'chat → ollama')}× CPU per event`);
console.log(`  gemini ÷ openai translated for a Messages client: ${ratio('messages → gemini', 'messages → openai')}× CPU per event`);
console.log("  (CPU is the serve process's on-CPU time over the whole case: request handling included)");
