#!/usr/bin/env node
// What converting a long tool call written as text costs once its last byte has come (README
// "Agents on local models": ≤ 1 ms after the last byte, however long the call): a Write call of
// --kb KB of file content streamed as a slow local model writes it, a few characters an event,
// through what a Chat relay with tools runs (the wire's reader, TextCallReader, TextCallOutput),
// in one process. Two shapes: the call as the whole answer (held before commit), and the call
// after a sentence of text (held after commit, on a stream relayed until then).
//
//   npm run build && node bench/held-call.mjs [--kb 20] [--runs 200] [--chars 4]
//
// Reported per shape: ms for the closing event (read, recovered, checked, rendered), p50 and p99;
// and µs per event while the call grows (the hold's own cost per token).
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { chatClient } from '../dist/protocols/chat/client.js';
import { chatWire } from '../dist/protocols/chat/wire.js';
import { EVENT_CONTENT, newFacts } from '../dist/protocols/core/types.js';
import { toolTextScope } from '../dist/protocols/tool-text/scope.js';
import { TextCallOutput } from '../dist/protocols/tool-text/text-call-output.js';
import { TextCallReader } from '../dist/protocols/tool-text/text-call-reader.js';

const { values: argv } = parseArgs({ options: { kb: { type: 'string' }, runs: { type: 'string' }, chars: { type: 'string' } } });
const KB = Number(argv.kb ?? 20);
const RUNS = Number(argv.runs ?? 200);
const CHARS = Number(argv.chars ?? 4);

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'Write',
      description: 'Write a file',
      parameters: { type: 'object', properties: { file_path: { type: 'string' }, content: { type: 'string' } }, required: ['file_path', 'content'] },
    },
  },
];
const tier = { name: 'local', tool_text: 'auto' };
const place = { name: 'local', isLast: () => false };

/** A file of `bytes` characters with what JSON escapes: quotes, backslashes, newlines. */
function fileOf(bytes) {
  let text = '';
  for (let i = 0; text.length < bytes; i++) text += `def step_${i}(x):\n    return x * ${i} + len("it's \\"${i}\\"")  # step ${i}\n`;
  return text.slice(0, bytes);
}
const FORM = `<tool_call>\n${JSON.stringify({ name: 'Write', arguments: { file_path: 'app.py', content: fileOf(KB * 1024) } })}\n</tool_call>`;
const chunk = (delta, finish = null) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const pieces = (text) => Array.from({ length: Math.ceil(text.length / CHARS) }, (_, i) => text.slice(i * CHARS, (i + 1) * CHARS));

function eventsOf(lead) {
  const data = [
    chunk({ role: 'assistant', content: '' }),
    ...pieces(lead).map((content) => chunk({ content })),
    ...pieces(FORM).map((content) => chunk({ content })),
  ];
  return data.map((d) => ({ data: d, raw: Buffer.from(`data: ${d}\n\n`) }));
}
const SHAPES = [
  { name: 'the whole answer (held before commit)', events: eventsOf('') },
  { name: 'after text (held after commit, relayed until then)', events: eventsOf('Let me write app.py.\n') },
];

function request() {
  const parsed = chatClient.parse({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'write it' }], tools: TOOLS }, {});
  return parsed.request;
}

/** One stream: ms for its closing event, µs per event before it. */
function run(events) {
  const req = request();
  const scope = toolTextScope(tier, req, chatClient);
  const reader = new TextCallReader(chatWire.reader(), scope, place);
  const output = new TextCallOutput(chatClient.relay(req), () => chatClient.renderer(req), chatClient.handover(req));
  const facts = newFacts();
  const t0 = performance.now();
  for (let i = 0; i < events.length - 1; i++) {
    reader.read(events[i].data, facts);
    output.event(facts, events[i].raw);
  }
  const t1 = performance.now();
  const last = events.at(-1);
  reader.read(last.data, facts);
  const out = output.event(facts, last.raw);
  const closing = performance.now() - t1;
  if (!(facts.flags & EVENT_CONTENT) || !String(out).includes('"tool_calls"')) throw new Error('the call was not converted on its closing event');
  return { closing, perEventUs: ((t1 - t0) / (events.length - 1)) * 1000 };
}

// The first request with tools loads ajv off the request path (warmSchemaChecks): let it, then warm up.
request();
toolTextScope(tier, request(), chatClient);
await new Promise((resolve) => setImmediate(resolve));
for (const shape of SHAPES) for (let i = 0; i < 5; i++) run(shape.events);

console.log(`a Write call of ${FORM.length} characters (${KB} KB of content), ${CHARS} characters an event; ${RUNS} runs each`);
console.log('| shape | events | closing event p50, ms | p99, ms | per event while held, µs |');
console.log('|---|---|---|---|---|');
for (const shape of SHAPES) {
  const closings = [];
  let perEvent = 0;
  for (let i = 0; i < RUNS; i++) {
    const { closing, perEventUs } = run(shape.events);
    closings.push(closing);
    perEvent += perEventUs;
  }
  closings.sort((a, b) => a - b);
  const p = (q) => closings[Math.min(closings.length - 1, Math.floor(closings.length * q))].toFixed(3);
  console.log(`| ${shape.name} | ${shape.events.length} | ${p(0.5)} | ${p(0.99)} | ${(perEvent / RUNS).toFixed(2)} |`);
}
