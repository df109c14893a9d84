#!/usr/bin/env node
// What routing by purpose costs per request (docs/rules.md), on dist/: `npm run build` first.
//
//   node bench/rules.mjs [--requests N] [--json]
//
// A Claude Code–like Messages body (~80 KB: system, a dozen tools, a long tool-call history),
// parsed once outside the timing (the proxy parses it anyway). Cases, each a fresh RequestFacts
// per request (nothing carried over):
//   rules_main  — the README's recipe without prompt_tokens (client/class, images, thinking,
//                 header rules), a main-loop request that matches none of them: every rule read;
//   rules_background — the same rules, a labelled background request: the first rule matches;
//   prompt_bound — a `prompt_tokens: ">= 200000"` rule the body's size decides without a count.
import { parseArgs } from 'node:util';
import { loadConfigText } from '../dist/config/load.js';
import { clientCodec } from '../dist/protocols/registry.js';
import { matchRules } from '../dist/rules/match-rules.js';
import { RequestFacts } from '../dist/rules/request-facts.js';

const { values: argv } = parseArgs({ options: { requests: { type: 'string', default: '200000' }, json: { type: 'boolean', default: false } } });
const REQUESTS = Number(argv.requests);

const WORDS = 'the file function return value error test build module import export config route tier token'.split(' ');
const sentence = (n, k = 0) => Array.from({ length: n }, (_, i) => WORDS[(i * 7 + k) % WORDS.length]).join(' ');

function agentBody(kb) {
  const body = {
    model: 'cloud',
    max_tokens: 32000,
    stream: true,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.328; cc_entrypoint=cli; cch=00000;' },
      { type: 'text', text: sentence(2000) },
    ],
    tools: ['Bash', 'Read', 'Edit', 'Write', 'Grep', 'Glob', 'LS', 'TodoWrite', 'WebFetch', 'Task', 'NotebookEdit', 'MultiEdit'].map((name) => ({
      name,
      description: sentence(60),
      input_schema: { type: 'object', properties: { path: { type: 'string' } } },
    })),
    messages: [{ role: 'user', content: [{ type: 'text', text: sentence(40) }] }],
  };
  for (let i = 0; JSON.stringify(body).length < kb * 1024; i++) {
    const id = `toolu_${i}`;
    body.messages.push(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: sentence(15, i) },
          { type: 'tool_use', id, name: 'Read', input: { file_path: `/src/${i}.ts` } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: sentence(200, i) }] },
    );
  }
  return body;
}

const config = (rules) =>
  loadConfigText(
    `version: 1
providers:
  local: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  cloud: { type: anthropic, base_url: "https://api.anthropic.com", api_key: k }
routes:
  local: { tiers: [{ provider: local, model: m }] }
  cloud: { tiers: [{ provider: cloud, model: m }] }
rules:
${rules}`,
    '/bench/llm-route.yaml',
    {},
  );

const RECIPE = `  - { when: { client: claude-code, class: background }, route: local }
  - { when: { client: codex, class: background }, route: local }
  - { when: { images: true }, route: cloud }
  - { when: { thinking: true, model: "local*" }, route: cloud }
  - { when: { header: { x-team: infra } }, route: cloud }
`;

const body = agentBody(80);
const bytes = Buffer.byteLength(JSON.stringify(body));
const parsed = clientCodec('messages').parse(body, {});
if (!parsed.ok) throw new Error(parsed.message);
const main = { 'user-agent': 'claude-cli/2.1.328 (external, cli)', 'x-claude-code-request-class': 'main' };
const background = { ...main, 'x-claude-code-request-class': 'auxiliary' };

async function measure(name, cfg, headers, expected) {
  const run = async (n) => {
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const match = await matchRules(cfg, new RequestFacts(parsed.request, headers, bytes));
      if ((match?.route.name ?? null) !== expected) throw new Error(`${name}: matched ${match?.route.name}`);
    }
    return (performance.now() - started) / n;
  };
  await run(Math.min(REQUESTS, 20000)); // warm up
  const samples = [];
  for (let round = 0; round < 5; round++) samples.push(await run(REQUESTS / 5));
  samples.sort((a, b) => a - b);
  return { case: name, ms_per_request_median: Number(samples[2].toFixed(5)), ms_per_request_max: Number(samples[4].toFixed(5)) };
}

const results = [
  await measure('rules_main', config(RECIPE), main, null),
  await measure('rules_background', config(RECIPE), background, 'local'),
  await measure('prompt_bound', config(`  - { when: { prompt_tokens: ">= 200000" }, route: cloud }\n`), main, null),
];
if (argv.json) process.stdout.write(`${JSON.stringify({ body_bytes: bytes, requests: REQUESTS, results }, null, 2)}\n`);
else
  for (const r of results)
    process.stdout.write(
      `${r.case.padEnd(18)} ${(r.ms_per_request_median * 1000).toFixed(2)} µs/request (max of 5 rounds ${(r.ms_per_request_max * 1000).toFixed(2)} µs), body ${bytes} bytes\n`,
    );
