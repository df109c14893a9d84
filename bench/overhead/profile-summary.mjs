#!/usr/bin/env node
// Summarises V8 .cpuprofile files (from `node --cpu-prof`): self time aggregated by function + url:line,
// top N, as a Markdown table; then, for each of the top entries, the call paths (up to --depth frames)
// that spent that self time; then self time by file and by area (first two path segments: dist/proxy,
// node_modules/undici, node:internal, native), which is how the request path's JS is attributed.
// Usage: node profile-summary.mjs FILE.cpuprofile [...] [--top N] [--depth D] [--root DIR]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '10' },
    depth: { type: 'string', default: '4' },
    paths: { type: 'string', default: '3' },
    root: { type: 'string', default: process.cwd() },
  },
});
if (positionals.length === 0) {
  console.error('usage: node bench/overhead/profile-summary.mjs FILE.cpuprofile [...] [--top N]');
  process.exit(2);
}

const selfUs = new Map();
const fileUs = new Map();
const areaUs = new Map();
const pathsUs = new Map(); // key -> Map(call path -> us)
let totalUs = 0;
let idleUs = 0;
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
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
    const file = url || '(V8 / native)';
    fileUs.set(file, (fileUs.get(file) ?? 0) + dt);
    const area = areaOf(url);
    areaUs.set(area, (areaUs.get(area) ?? 0) + dt);
    const callers = [];
    for (let id = parentOf.get(samples[i]); id !== undefined && callers.length < Number(values.depth); id = parentOf.get(id)) {
      const f = byId.get(id).callFrame;
      if (f.functionName === '(root)') break;
      callers.push(`${f.functionName || '(anonymous)'}${f.url ? ` (${shorten(f.url).split('/').pop()}:${f.lineNumber + 1})` : ''}`);
    }
    const paths = pathsUs.get(key) ?? new Map();
    pathsUs.set(key, paths);
    const path = callers.join(' < ') || '(top level)';
    paths.set(path, (paths.get(path) ?? 0) + dt);
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

console.log('\nWhere the top entries were called from (self ms by caller path, innermost caller first):\n');
top.forEach(([key, us], i) => {
  const [fn] = key.split('\t');
  console.log(`${i + 1}. ${fn} (${(us / 1000).toFixed(0)} ms)`);
  const paths = [...pathsUs.get(key).entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(values.paths));
  for (const [path, pus] of paths) console.log(`   - ${(pus / 1000).toFixed(0)} ms: ${path}`);
});

printShares('Self time by area', areaUs, 20);
printShares('Self time by file', fileUs, Number(values.top));

function printShares(title, map, n) {
  console.log(`\n${title}:\n`);
  console.log('| where | self ms | % of busy |');
  console.log('|---|---|---|');
  for (const [where, us] of [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`| \`${where}\` | ${(us / 1000).toFixed(0)} | ${((us / totalUs) * 100).toFixed(1)} |`);
  }
}

/** `dist/proxy`, `node_modules/undici`, `node:internal`, `wasm` or `(V8 / native)`. */
function areaOf(url) {
  if (!url) return '(V8 / native)';
  if (url.startsWith('node:')) return url.startsWith('node:internal') ? 'node:internal' : 'node (lib)';
  if (url.startsWith('wasm:')) return 'wasm';
  const parts = url.split('/');
  return parts[0] === 'node_modules' ? `node_modules/${parts[1]}` : parts.slice(0, 2).join('/');
}

function shorten(url) {
  let path = url.replace(/^file:\/\//, '');
  const root = values.root.endsWith('/') ? values.root : `${values.root}/`;
  if (path.startsWith(root)) path = path.slice(root.length);
  return path;
}
