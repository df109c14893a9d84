#!/usr/bin/env node
// Summarises V8 .cpuprofile files (from `node --cpu-prof`): self time aggregated by function + url:line,
// top N, as a Markdown table. Usage: node profile-summary.mjs FILE.cpuprofile [...] [--top N] [--root DIR]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '10' }, root: { type: 'string', default: process.cwd() } } });
if (positionals.length === 0) {
  console.error('usage: node bench/overhead/profile-summary.mjs FILE.cpuprofile [...] [--top N]');
  process.exit(2);
}

const selfUs = new Map();
let totalUs = 0;
let idleUs = 0;
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time since the previous sample; charge the interval to the sample that ends it.
    const dt = timeDeltas[i] ?? 0;
    const frame = byId.get(samples[i]).callFrame;
    if (frame.functionName === '(idle)') {
      idleUs += dt;
      continue;
    }
    totalUs += dt;
    const url = frame.url ? shorten(frame.url) : '';
    const key = `${frame.functionName || '(anonymous)'}\t${url}${url ? `:${frame.lineNumber + 1}` : ''}`;
    selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  }
}

const top = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
console.log(`busy ${(totalUs / 1000).toFixed(0)} ms, idle ${(idleUs / 1000).toFixed(0)} ms (${positionals.length} profile(s))\n`);
console.log('| # | function | where | self ms | % of busy |');
console.log('|---|---|---|---|---|');
top.forEach(([key, us], i) => {
  const [fn, where] = key.split('\t');
  console.log(`| ${i + 1} | \`${fn}\` | ${where ? `\`${where}\`` : '(V8 / native)'} | ${(us / 1000).toFixed(0)} | ${((us / totalUs) * 100).toFixed(1)} |`);
});

function shorten(url) {
  let path = url.replace(/^file:\/\//, '');
  const root = values.root.endsWith('/') ? values.root : `${values.root}/`;
  if (path.startsWith(root)) path = path.slice(root.length);
  return path;
}
