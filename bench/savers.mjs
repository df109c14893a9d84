#!/usr/bin/env node
// Token savers on a realistic agent request: a Claude Code-like Anthropic Messages body of about
// 80 KB (long system prompt, tool definitions, file reads, JSON and long logs, code fences), all
// five savers, ms per request (p50/p99). Runs on dist/: `npx tsc -p tsconfig.json` first.
//
//   node bench/savers.mjs [--requests N] [--kb 80] [--json]
//
// Three cases: `repeat` (the same body, parsed afresh each time, as an agent re-sends its
// history), `grow` (an agent loop: each request is the previous one plus a tool call and its
// result), `cold` (every text never seen before: the first request of a new conversation).
import { parseArgs } from 'node:util';
import { applySavers } from '../dist/savers/pipeline.js';
import { buildSaver } from '../dist/savers/registry.js';
import { contentTokens } from '../dist/savers/view.js';
import { tokenCounter } from '../dist/tokens/count.js';

const { values: argv } = parseArgs({
  options: { requests: { type: 'string', default: '400' }, kb: { type: 'string', default: '80' }, json: { type: 'boolean', default: false } },
});
const REQUESTS = Number(argv.requests);
const TARGET_BYTES = Number(argv.kb) * 1024;

// ─── a deterministic agent conversation ───────────────────────────────────────

let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = (list) => list[Math.floor(random() * list.length)];
const WORDS = 'the file function return value error test build module import export config route tier token request stream upstream client cache'.split(' ');
const sentence = (n = 12) => Array.from({ length: n }, () => pick(WORDS)).join(' ');

const SYSTEM = [
  'You are Claude Code, an interactive CLI tool that helps users with software engineering tasks.',
  '',
  '# Tone and style',
  ...Array.from({ length: 40 }, () => `- ${sentence(18)}.  `),
  '',
  '',
  '',
  '# Doing tasks',
  ...Array.from({ length: 30 }, () => `${sentence(25)}.`),
  '',
  '```sh',
  'npm   run   lint',
  'npm   test -- --watch=false',
  '```',
  '',
  '# Tool usage policy',
  ...Array.from({ length: 30 }, () => `- ${sentence(20)}.`),
].join('\n');
const ENV = `<env>\nWorking directory: /home/dev/project\nIs directory a git repo: Yes\nPlatform: linux\nToday's date: 2025-06-01\n</env>`;

const tools = ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'Glob', 'LS', 'TodoWrite', 'WebFetch', 'Task', 'NotebookEdit', 'MultiEdit'].map((name) => ({
  name,
  description: Array.from({ length: 6 }, () => sentence(20)).join('. '),
  input_schema: {
    type: 'object',
    properties: { path: { type: 'string', description: sentence(10) }, command: { type: 'string', description: sentence(10) }, limit: { type: 'number' } },
    required: ['path'],
  },
}));

const fileRead = (lines) =>
  Array.from(
    { length: lines },
    (_, i) => `${String(i + 1).padStart(6)}\t${'  '.repeat(i % 4)}${pick(['const', 'return', 'if (', 'export function', '//'])} ${sentence(6)}`,
  ).join('\n');
const jsonOutput = () =>
  JSON.stringify(
    {
      files: Array.from({ length: 25 }, (_, i) => ({
        path: `src/${pick(WORDS)}/${pick(WORDS)}-${i}.ts`,
        size: Math.floor(random() * 9000),
        modified: '2025-05-30T10:00:00Z',
      })),
    },
    null,
    2,
  );
const testLog = (lines) =>
  `${Array.from(
    { length: lines },
    () => `${pick([' PASS ', ' FAIL ', '      ', '  ✓  '])} test/${pick(WORDS)}.test.ts > ${sentence(5)}    (${Math.floor(random() * 900)} ms)   `,
  ).join('\n')}\n\n\n\nTest Files  3 failed | 41 passed (44)\n     Tests  7 failed | 388 passed (395)`;

function turn(i) {
  const id = `toolu_${String(i).padStart(4, '0')}`;
  const kind = i % 4;
  const [tool, input, output] =
    kind === 0
      ? ['Read', { file_path: `/home/dev/project/src/${pick(WORDS)}.ts` }, fileRead(60)]
      : kind === 1
        ? ['Bash', { command: 'npm test' }, testLog(70)]
        : kind === 2
          ? ['Glob', { pattern: 'src/**/*.ts' }, jsonOutput()]
          : [
              'Grep',
              { pattern: pick(WORDS) },
              `Found 12 matches:\n\n\n${Array.from({ length: 12 }, () => `src/${pick(WORDS)}.ts:${Math.floor(random() * 400)}:  ${sentence(8)}`).join('\n')}`,
            ];
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `${sentence(15)}.\n\n\n\nLet me check   that.` },
        { type: 'tool_use', id, name: tool, input },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: id, content: output },
        ...(i % 5 === 0 ? [{ type: 'text', text: `<system-reminder>\n${sentence(30)}\n</system-reminder>` }] : []),
      ],
    },
  ];
}

function conversation(targetBytes) {
  const body = {
    model: 'claude-sonnet-4',
    max_tokens: 32000,
    stream: true,
    system: [
      { type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } },
      { type: 'text', text: ENV },
      { type: 'text', text: SYSTEM.split('\n').slice(0, 20).join('\n') }, // a repeated chunk of the prompt
    ],
    tools,
    messages: [{ role: 'user', content: [{ type: 'text', text: `Fix the failing tests.   ${sentence(40)}\n\n\n` }] }],
  };
  for (let i = 0; JSON.stringify(body).length < targetBytes; i++) body.messages.push(...turn(i));
  body.messages.push({ role: 'user', content: 'Now run them again.' });
  return body;
}

// ─── measuring ───────────────────────────────────────────────────────────────

const SAVERS = [
  buildSaver({ name: 'whitespace', options: { tool_results: false } }),
  buildSaver({ name: 'dedupe_system', options: {} }),
  buildSaver({ name: 'minify_tool_json', options: {} }),
  buildSaver({ name: 'truncate_tool_output', options: { max_tokens: 600 } }),
  buildSaver({ name: 'trim_history', options: { max_tokens: 8000, keep_last: 6 } }),
];

const counter = await tokenCounter('o200k_base');
const base = conversation(TARGET_BYTES);
const baseText = JSON.stringify(base);

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: +percentile(sorted, 50).toFixed(3), p99: +percentile(sorted, 99).toFixed(3), max: +sorted.at(-1).toFixed(3), n: samples.length };
}
/** ms of one pipeline run; the body is parsed outside the timing, as the proxy parses it anyway. */
let skipped = 0; // savers skipped (threw or overran) over every run
function timeOne(text) {
  const body = JSON.parse(text);
  const started = performance.now();
  const result = applySavers('messages', body, SAVERS, counter);
  const ms = performance.now() - started;
  skipped += result.failures.length;
  return { ms, result };
}

const first = timeOne(baseText); // loads nothing new (the tokenizer is loaded), but fills the memo
const results = { bytes: baseText.length, messages: base.messages.length, first_ms: +first.ms.toFixed(2) };
results.tokens = { before: first.result.measures[0].before, after: first.result.measures.at(-1).after };
results.savers = first.result.measures.map((m) => ({ saver: m.saver, saved: m.before - m.after, failed: !!m.failed }));
results.failures = first.result.failures;

// repeat: the same 80 KB body, parsed afresh each time (new strings, counts remembered)
for (let i = 0; i < 30; i++) timeOne(baseText); // warm-up
results.repeat = stats(Array.from({ length: REQUESTS }, () => timeOne(baseText).ms));

// grow: an agent loop up to the full body; each request adds one tool call and its result
const grow = [];
const prefix = { ...base, messages: [] };
for (let k = 1; k <= base.messages.length; k += 2) {
  prefix.messages = base.messages.slice(0, k);
  grow.push(timeOne(JSON.stringify(prefix)).ms);
}
results.grow = stats(grow);

// cold: nothing seen before (a salt in every text)
const cold = [];
for (let i = 0; i < Math.min(REQUESTS, 40); i++) cold.push(timeOne(baseText.replaceAll('the ', `the${i} `)).ms);
results.cold = stats(cold);

// a route without savers
const none = [];
for (let i = 0; i < REQUESTS; i++) {
  const body = JSON.parse(baseText);
  const started = performance.now();
  applySavers('messages', body, [], counter);
  none.push(performance.now() - started);
}
results.no_savers = stats(none);

results.skipped = skipped;

// the measure on its own (contentTokens of the body as sent, counts remembered)
results.check = contentTokens('messages', first.result.body, counter.count) === results.tokens.after;

if (argv.json) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  const row = (name, s) =>
    `${name.padEnd(10)} p50 ${String(s.p50).padStart(7)} ms   p99 ${String(s.p99).padStart(7)} ms   max ${String(s.max).padStart(7)} ms   (n=${s.n})`;
  console.log(
    `body: ${(results.bytes / 1024).toFixed(1)} KB, ${results.messages} messages; tokens ${results.tokens.before} → ${results.tokens.after} (measure re-checked: ${results.check})`,
  );
  console.log(`savers: ${results.savers.map((s) => `${s.saver} −${s.saved}${s.failed ? ' (FAILED)' : ''}`).join(', ')}`);
  console.log(`first request (cold memo): ${results.first_ms} ms`);
  console.log(row('repeat', results.repeat));
  console.log(row('grow', results.grow));
  console.log(row('cold', results.cold));
  console.log(row('no savers', results.no_savers));
  console.log(`savers skipped (threw or overran 20 ms) over all runs: ${results.skipped}`);
}
