#!/usr/bin/env node
// The cost of `on_break: resume` on streams that do not break: the same tier behind two routes,
// one with the default `on_break: error`, one with `resume`, through one `llm-route serve`, in
// the same run, for a same-protocol client (Chat Completions on an openai tier: a byte relay
// without resume, rendered with it) and a translated one (Messages on the same tier).
//
//   npm run build && node bench/resume.mjs [--streams N] [--tokens N] [--rounds N]
//
// Reported: proxy CPU per upstream event (utime+stime of the serve process / events) per case,
// and the ratios resume / error, medians over the rounds (the order alternates per round).
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { cpuMs } from './overhead/procfs.mjs';
import { installCleanup, startServeOnMock, stopAll } from './overhead/processes.mjs';

const { values: argv } = parseArgs({ options: { streams: { type: 'string' }, tokens: { type: 'string' }, rounds: { type: 'string' } } });
const STREAMS = Number(argv.streams ?? 200);
const TOKENS = Number(argv.tokens ?? 100);
const ROUNDS = Number(argv.rounds ?? 4);

installCleanup();
const { serve } = await startServeOnMock({
  tokens: TOKENS,
  tmpPrefix: 'llm-route-resume-bench-',
  routes: ['  plain: { tiers: [{ provider: fast, model: m }] }', '  resumable: { tiers: [{ provider: fast, model: m }], on_break: resume }'],
});
const origin = new URL(serve.url).origin;

const chat = (route) => ({ path: '/v1/chat/completions', body: JSON.stringify({ model: route, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
const messages = (route) => ({
  path: '/v1/messages',
  body: JSON.stringify({ model: route, max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
});
const CASES = { 'chat/error': chat('plain'), 'chat/resume': chat('resumable'), 'messages/error': messages('plain'), 'messages/resume': messages('resumable') };

async function once(pool, target) {
  const res = await pool.request({
    method: 'POST',
    path: target.path,
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: target.body,
  });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${await res.body.text()}`);
  await res.body.text();
}

async function run(name) {
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  for (let i = 0; i < 20; i++) await once(pool, CASES[name]);
  const before = cpuMs(serve.pid);
  for (let i = 0; i < STREAMS; i++) await once(pool, CASES[name]);
  const cpu = cpuMs(serve.pid) - before;
  await pool.close();
  return (cpu * 1000) / (STREAMS * (TOKENS + 3));
}

const rounds = [];
try {
  const names = Object.keys(CASES);
  for (let r = 0; r < ROUNDS; r++) {
    const round = {};
    for (const name of r % 2 === 0 ? names : [...names].reverse()) round[name] = await run(name);
    rounds.push(round);
    console.log(`round ${r + 1}: ${names.map((n) => `${n} ${round[n].toFixed(2)} µs`).join(', ')}`);
  }
} finally {
  await stopAll();
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const m = (name) => median(rounds.map((round) => round[name]));
console.log(`\n${STREAMS} streams of ${TOKENS} content events per case and round, ${ROUNDS} rounds, proxy CPU per upstream event (medians):`);
// The headline is the median of each round's own ratio: both cases of a round ran minutes apart at most.
for (const p of ['chat', 'messages']) {
  const ratios = rounds.map((r) => r[`${p}/resume`] / r[`${p}/error`]);
  console.log(
    `  ${p}: error ${m(`${p}/error`).toFixed(2)} µs, resume ${m(`${p}/resume`).toFixed(2)} µs; resume / error per round ${ratios.map((x) => x.toFixed(2)).join(' ')} → median ${median(ratios).toFixed(2)}×`,
  );
}
