#!/usr/bin/env node
// The import graph of src/: file-level import cycles, and imports that run from a lower layer
// to a higher one (DESIGN.md "Vocabulary lives below its users"; issue 20: goal 0 and 0).
//
//   node scripts/import-graph.mjs [root] [--json] [--check]
//
// root defaults to src/ beside this script. --json prints the findings for machines; --check
// exits 1 when there is a cycle, an upward import or a directory missing from LAYERS.
// Plain Node, no dependencies: imports are found with regular expressions (see importsOf).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * src/'s top-level directories, low → high. A file may import its own directory and any
 * directory of a lower rank. Directories that share a rank (one row) are peers: they may
 * not import each other at all, so that no pair of directories can come to lean on each other.
 */
export const LAYERS = [
  ['runtime'], //                    start-up tuning (bundle stand-ins, compile cache, zod, wasm tier, GC once quiet), one switch
  ['util'], //                       generic helpers that know nothing of llm-route (sleep, lifetimes, formatting)
  ['tokens', 'sse', 'http'], //      counting a text's tokens, SSE/NDJSON framing, HTTP body/deadline helpers
  ['config'], //                     the tier file: zod schema (the one source of config types), loading, savers' options
  ['providers'], //                  pools and keys of the servers behind the codecs
  ['protocols'], //                  the wires: neutral model, codecs (core/), protocol and outcome names (names.ts); registry.ts on top
  ['telemetry'], //                  typed events (they carry protocol names and usage), the bus, metrics
  ['tracing'], //                    OpenTelemetry spans made from the events, exported over OTLP/HTTP; loaded (import()) only when traces are on
  ['redis'], //                     the Redis connection and its Lua scripts (state's limits, idempotency, weights; usage's budget ledger)
  ['savers'], //                     token savers: request rewrites before an upstream call, measured in events
  ['usage'], //                      the usage log, incidents, budgets (budgets/: ledger interface, amounts, windows, SQLite tables, local and Redis ledgers)
  ['state'], //                      the state seam: limits, idempotency, SharedWeights; picks the budget ledger (usage/budgets/)
  ['health'], //                     tier checks, circuits, the health board
  ['fit'], //                        what a tier can take, learned by discovery (which asks health's model lists)
  ['rules'], //                      routing by purpose: rules on what a request is, client classes, local only
  ['control'], //                    runtime weights (state's SharedWeights), alerts, rollbacks, the admin API
  ['ui'], //                         the Ink dashboard: reads events, usage and fit
  ['proxy'], //                      the request path: plan, attempt, commit, relay
  ['server'], //                     the HTTP server: ingress, and the proxy's lifecycle wiring the layers together
  ['launch', 'mock', 'bench-command', 'demo', 'init'], // what commands start: providers, the mock, benches, demo, init
  ['cli'], //                        the commander program, one file per command
];

const STATIC_IMPORT = /^[ \t]*(?:import|export)\s+(?:type\s+)?[\w*{}\s,$]+?\s+from\s*['"]([^'"]+)['"]/gm;
const SIDE_EFFECT_IMPORT = /^[ \t]*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every .ts/.tsx file under `dir` (declaration files hold no imports worth counting). */
function sourceFiles(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

/** The relative specifiers a file imports: static, re-exports, side-effect and dynamic, type-only included. */
function importsOf(text) {
  const specifiers = [];
  for (const pattern of [STATIC_IMPORT, SIDE_EFFECT_IMPORT]) {
    for (const match of text.matchAll(pattern)) specifiers.push(match[1]);
  }
  for (const match of text.matchAll(DYNAMIC_IMPORT)) {
    // import('…') named in a comment is not an import.
    const lineStart = text.lastIndexOf('\n', match.index) + 1;
    const before = text.slice(lineStart, match.index);
    if (!/^\s*(\*|\/\*)/.test(before) && !before.includes('//')) specifiers.push(match[1]);
  }
  return specifiers.filter((specifier) => specifier.startsWith('.'));
}

/** The file a relative specifier names (TypeScript's NodeNext: './x.js' is x.ts or x.tsx). */
function resolveImport(from, specifier, known) {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${stem}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx')]) {
    if (known.has(candidate)) return candidate;
  }
  return null;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cyclesOf(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file)) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file), index.get(target)));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file).has(file)) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** The cycles, upward imports and unlisted directories of the tree under `root`. */
export function analyse(root) {
  const rankOf = new Map(LAYERS.flatMap((row, rank) => row.map((dir) => [dir, rank])));
  const files = sourceFiles(root);
  const known = new Set(files);
  const name = (file) => relative(root, file).split(sep).join('/');
  const layerOf = (file) => (name(file).includes('/') ? name(file).split('/')[0] : '.');
  const graph = new Map(files.map((file) => [file, new Set()]));
  const upward = [];
  const unlisted = new Set();
  for (const file of files) {
    const from = layerOf(file);
    if (!rankOf.has(from)) unlisted.add(from);
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolveImport(file, specifier, known);
      if (target === null) continue; // outside root (or a module TypeScript will report)
      graph.get(file).add(target);
      const to = layerOf(target);
      if (from === to || !rankOf.has(from) || !rankOf.has(to)) continue;
      if (rankOf.get(to) >= rankOf.get(from)) upward.push({ from: name(file), to: name(target), fromLayer: from, toLayer: to });
    }
  }
  const edges = [...graph.values()].reduce((sum, targets) => sum + targets.size, 0);
  return { files: files.length, edges, cycles: cyclesOf(graph).map((cycle) => cycle.map(name)), upward, unlisted: [...unlisted].sort() };
}

function report(result) {
  const lines = [`${result.files} files, ${result.edges} imports: ${result.cycles.length} cycles, ${result.upward.length} upward imports`];
  for (const cycle of result.cycles) lines.push(`cycle: ${cycle.join(' → ')}`);
  for (const edge of result.upward) lines.push(`upward: ${edge.from} → ${edge.to} (${edge.fromLayer} may not import ${edge.toLayer})`);
  for (const dir of result.unlisted) lines.push(`unlisted: ${dir}/ has no place in LAYERS (scripts/import-graph.mjs)`);
  return lines.join('\n');
}

function main(argv) {
  const flags = new Set(argv.filter((arg) => arg.startsWith('--')));
  const positional = argv.filter((arg) => !arg.startsWith('--'));
  const root = resolve(positional[0] ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src'));
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    process.stderr.write(`import-graph: ${root} is not a directory\n`);
    return 2;
  }
  const result = analyse(root);
  process.stdout.write(`${flags.has('--json') ? JSON.stringify(result, null, 2) : report(result)}\n`);
  const clean = result.cycles.length === 0 && result.upward.length === 0 && result.unlisted.length === 0;
  return flags.has('--check') && !clean ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
