#!/usr/bin/env node
// The fit check's cost per request (docs/fit.md), on dist/: `npx tsc -p tsconfig.json` first.
//
//   node bench/fit-check.mjs [--requests N] [--json]
//
// Three cases, each a fresh parse of the body per request (as the proxy parses it anyway, outside the timing):
//   none   — a route whose tier has no known window: the check must cost nothing;
//   small  — a 2 KB body, a known 8,192-token window: fits by its byte length, no token count;
//   near   — an ~80 KB Claude Code–like Messages body whose window is 5% above its count: counted,
//            each text's count remembered from the request before (an agent re-sends its history).
// `near_cold` is the first count of that body (every text new), for reference.
import { parseArgs } from 'node:util';
import { loadConfigText } from '../dist/config/load.js';
import { checkFit } from '../dist/fit/fit-check.js';
import { PromptCount } from '../dist/protocols/core/prompt-tokens.js';
import { UpstreamCall } from '../dist/protocols/call.js';
import { clientCodec } from '../dist/protocols/registry.js';
import { tokenCounter } from '../dist/tokens/count.js';

const { values: argv } = parseArgs({ options: { requests: { type: 'string', default: '300' }, json: { type: 'boolean', default: false } } });
const REQUESTS = Number(argv.requests);

let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const WORDS = 'the file function return value error test build module import export config route tier token request stream upstream client cache'.split(' ');
const sentence = (n) => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');

/** A Claude Code–like body: a long system prompt, a dozen tools, tool calls and their results, to ~`kb` KB. */
function agentBody(kb) {
  const body = {
    model: 'claude',
    max_tokens: 32000,
    stream: true,
    system: [{ type: 'text', text: Array.from({ length: 120 }, () => `- ${sentence(18)}.`).join('\n') }],
    tools: ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'Glob', 'LS', 'TodoWrite', 'WebFetch', 'Task', 'NotebookEdit', 'MultiEdit'].map((name) => ({
      name,
      description: sentence(60),
      input_schema: { type: 'object', properties: { path: { type: 'string', description: sentence(8) } }, required: ['path'] },
    })),
    messages: [{ role: 'user', content: [{ type: 'text', text: `Fix the failing tests. ${sentence(40)}` }] }],
  };
  for (let i = 0; JSON.stringify(body).length < kb * 1024; i++) {
    const id = `toolu_${i}`;
    body.messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: sentence(15) },
          { type: 'tool_use', id, name: 'Read', input: { file_path: `/src/${i}.ts` } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: Array.from({ length: 40 }, (_, n) => `${n}\tconst ${sentence(6)}`).join('\n') }],
      },
    );
  }
  return body;
}

function tierWith(extra) {
  const yaml = `version: 1
providers:
  claude: { type: anthropic, base_url: "http://127.0.0.1:9" }
routes:
  claude:
    tiers:
      - { provider: claude, model: m${extra} }
`;
  return loadConfigText(yaml, '/bench/llm-route.yaml', {}).routes.get('claude').tiers[0];
}

const codec = clientCodec('messages');
function prepared(text, tier) {
  const request = codec.parse(JSON.parse(text), {}).request;
  return { request, body: UpstreamCall.prepare(tier, codec, request).request.body };
}

async function run(tier, text, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const { request, body } = prepared(text, tier);
    const started = performance.now();
    const verdict = checkFit(tier, request, body, new PromptCount(request));
    if (verdict instanceof Promise) await verdict;
    samples.push(performance.now() - started);
  }
  return samples;
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return { p50_ms: +at(50).toFixed(4), p99_ms: +at(99).toFixed(4), n: samples.length };
}

const counter = await tokenCounter('o200k_base'); // loaded once, as in a running proxy after its first count
const small = JSON.stringify({ model: 'claude', max_tokens: 256, messages: [{ role: 'user', content: sentence(300) }] });
const near = JSON.stringify(agentBody(80));
const nearTokens = await new PromptCount(codec.parse(JSON.parse(near), {}).request).tokens('o200k_base');
void counter;

const results = { bytes: { small: small.length, near: near.length }, near_prompt_tokens: nearTokens };
const auto = tierWith('');
const known = tierWith(', context: 8192');
const tight = tierWith(`, context: ${Math.round((nearTokens + 1024) * 1.05)}`);
results.none = stats(await run(auto, near, REQUESTS));
results.small = stats(await run(known, small, REQUESTS));
results.near = stats(await run(tight, near, REQUESTS));
seed = 99; // new texts: every count is a real one
results.near_cold = stats(await run(tight, JSON.stringify(agentBody(80)), 1));

if (argv.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  process.stdout.write(`fit check, ms per request (p50 / p99), ${REQUESTS} requests each\n`);
  process.stdout.write(`  no known window       ${results.none.p50_ms} / ${results.none.p99_ms}\n`);
  process.stdout.write(`  2 KB, known window    ${results.small.p50_ms} / ${results.small.p99_ms}   (no token count)\n`);
  process.stdout.write(
    `  ${Math.round(near.length / 1024)} KB near its limit  ${results.near.p50_ms} / ${results.near.p99_ms}   (${nearTokens} tokens, texts seen before)\n`,
  );
  process.stdout.write(`  ${Math.round(near.length / 1024)} KB, first time     ${results.near_cold.p50_ms}\n`);
}
