#!/usr/bin/env node
// A stream's time to first content, one stream at a time, in alternating rounds: direct to the
// fast mock, the json pipe, llm-route (this checkout) and optionally another build. The mock sends
// its whole answer at once, so the first content arrives in one read with the rest of the answer
// (a burst, as from a server that is ahead of its reader): what the proxy does before the first
// content leaves is what this measures.
//
//   npm run build && node bench/first-content.mjs [--tokens 100] [--rounds 8] [--streams 200] [--other ../other-checkout]
import { parseArgs } from 'node:util';
import { installCleanup, startAbTargets, stopAll } from './overhead/processes.mjs';
import { median } from './overhead/stats.mjs';
import { sequentialStreams } from './overhead/streams.mjs';

const { values: argv } = parseArgs({
  options: { tokens: { type: 'string' }, rounds: { type: 'string' }, streams: { type: 'string' }, other: { type: 'string' } },
});
const TOKENS = Number(argv.tokens ?? 100);
const ROUNDS = Number(argv.rounds ?? 8);
const STREAMS = Number(argv.streams ?? 200);

installCleanup();

const { mock, targets: proxies } = await startAbTargets({ tokens: TOKENS, other: argv.other, tmpPrefix: 'llm-route-first-' });
const targets = [{ label: 'direct', url: mock.url, model: 'm' }, ...proxies];

const body = (model) => JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'Say hello.' }] });
for (const target of targets) await sequentialStreams({ ...target, headers: {} }, body(target.model), { count: 30, maxS: 2 }); // warm-up
const p50s = new Map(targets.map((t) => [t, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const target of r % 2 === 0 ? targets : [...targets].reverse()) {
    const result = await sequentialStreams({ ...target, headers: {} }, body(target.model), { count: STREAMS, maxS: 8, expectChunks: TOKENS });
    if (result.errors > 0) console.error(`${target.label}: ${result.errors} failed streams (${result.firstError})`);
    p50s.get(target).push(result.ttfbP50);
  }
  console.log(`round ${r + 1}: ${targets.map((t) => `${t.label} ${p50s.get(t).at(-1).toFixed(3)} ms`).join(', ')}`);
}

const of = (label) => median(p50s.get(targets.find((t) => t.label === label)));
console.log(`\n${TOKENS} tokens in one burst, ${ROUNDS} rounds of ${STREAMS} streams; medians of each round's p50:\n`);
console.log('| path | first content p50, ms | vs direct | vs json pipe |');
console.log('|---|---|---|---|');
for (const target of targets) {
  const ms = median(p50s.get(target));
  console.log(`| ${target.label} | ${ms.toFixed(3)} | ${(ms / of('direct')).toFixed(2)}× | ${(ms / of('json pipe')).toFixed(2)}× |`);
}
await stopAll();
