#!/usr/bin/env node
// CPU per non-streaming request at a fixed rate: llm-route (this checkout, and optionally another
// build) against the json pipe, in alternating rounds. At saturation every proxy's CPU per request
// moves with how many requests share a wake-up (bench/overhead's CPU section runs flat out); a
// fixed rate (autocannon's overallRate, c10) holds the load equal for all, and the threads'
// /proc/PID/task/*/schedstat times are exact. Also reported: time runnable but waiting for a core
// (the woken client or upstream often takes this one), which a --cpu-prof profile counts into the
// socket write where it happened.
//
//   npm run build && node bench/cpu-at-rate.mjs [--rate 3000] [--rounds 10] [--secs 4] [--other ../other-checkout] [--usage-off]
//
// --other: a second checkout, built (its bin/llm-route.js), e.g. a worktree of the commit before a
// change: `git worktree add ../before HEAD~1 && (cd ../before && npm ci)`.
// --usage-off: this checkout's serve once more, its usage log off: the usage row's cost beside it.
import { parseArgs } from 'node:util';
import { runLoad } from './overhead/load.mjs';
import { installCleanup, startAbTargets, stopAll } from './overhead/processes.mjs';
import { schedNs } from './overhead/procfs.mjs';
import { median } from './overhead/stats.mjs';

const { values: argv } = parseArgs({
  options: { rate: { type: 'string' }, rounds: { type: 'string' }, secs: { type: 'string' }, other: { type: 'string' }, 'usage-off': { type: 'boolean' } },
});
const RATE = Number(argv.rate ?? 3000);
const ROUNDS = Number(argv.rounds ?? 10);
const SECS = Number(argv.secs ?? 4);

installCleanup();

const { targets } = await startAbTargets({ tokens: 100, other: argv.other, tmpPrefix: 'llm-route-rate-', usageOff: argv['usage-off'] });

/** One fixed-rate run: µs a 2xx answer on a CPU (runLoad, exact where the kernel keeps schedstat) and waiting for one. */
async function run(target, seconds) {
  const before = schedNs(target.pid).waiting;
  const body = JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'Say hello.' }] });
  const load = await runLoad({ url: target.url, headers: {}, body }, { connections: 10, durationS: seconds, rate: RATE, cpuPids: { proxy: target.pid } });
  const waitUs = (schedNs(target.pid).waiting - before) / 1000 / Math.max(1, load.ok);
  return { onCpuUs: load.cpuMsPerRequest.proxy * 1000, waitUs, rps: load.rps, non2xx: load.non2xx };
}

for (const target of targets) await run(target, 2); // warm-up: JIT, pools
const rounds = new Map(targets.map((t) => [t, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? targets : [...targets].reverse();
  for (const target of order) {
    const result = await run(target, SECS);
    if (result.non2xx > 0) console.error(`${target.label}: ${result.non2xx} non-2xx answers in round ${r + 1}`);
    rounds.get(target).push(result);
  }
  console.log(`round ${r + 1}: ${targets.map((t) => `${t.label} ${rounds.get(t).at(-1).onCpuUs.toFixed(1)} µs`).join(', ')}`);
}

const pipeCpu = median(rounds.get(targets[0]).map((x) => x.onCpuUs));
console.log(`\n${RATE} req/s, c10, ${ROUNDS} rounds of ${SECS} s, medians:\n`);
console.log('| process | on a CPU, µs/request | vs json pipe | runnable, waiting for a CPU, µs/request | req/s |');
console.log('|---|---|---|---|---|');
for (const target of targets) {
  const results = rounds.get(target);
  const cpu = median(results.map((x) => x.onCpuUs));
  const wait = median(results.map((x) => x.waitUs));
  const rps = median(results.map((x) => x.rps));
  console.log(`| ${target.label} | ${cpu.toFixed(1)} | ${(cpu / pipeCpu).toFixed(2)}× | ${wait.toFixed(1)} | ${rps.toFixed(0)} |`);
}
const cpuOf = (label) => {
  const target = targets.find((t) => t.label === label || (label === 'other' && t.label.startsWith('other (')));
  return target && median(rounds.get(target).map((x) => x.onCpuUs));
};
if (argv.other) console.log(`\nllm-route ÷ other: ${(cpuOf('llm-route') / cpuOf('other')).toFixed(3)}×`);
if (argv['usage-off']) console.log(`the usage log (its row, on vs off): ${(cpuOf('llm-route') - cpuOf('llm-route, usage log off')).toFixed(1)} µs a request`);
await stopAll();
