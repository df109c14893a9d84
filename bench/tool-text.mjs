#!/usr/bin/env node
// What a plain answer on a route with tools pays for tool text (docs/tool-text.md: ≤ 0.05 ms more to first content): the same Chat stream's first events read and output
// as a relay does it today (the wire's reader, RelayOutput) and with tool text on (the request's
// tool scope made, TextCallReader, TextCallOutput), per stream, in one process.
//
//   npm run build && node bench/tool-text.mjs [--streams N]
//
// Each stream: a fresh request (Claude Code's 17 tools), reader and output; the role chunk, the
// first content chunk (the commit point) and 8 more content chunks. Reported: µs per stream up to
// and including the first content event, and per later event, both ways, and the differences.
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { chatClient } from '../dist/protocols/chat/client.js';
import { chatWire } from '../dist/protocols/chat/wire.js';
import { toolTextScope } from '../dist/protocols/tool-text/scope.js';
import { TextCallOutput } from '../dist/protocols/tool-text/text-call-output.js';
import { TextCallReader } from '../dist/protocols/tool-text/text-call-reader.js';
import { newFacts } from '../dist/protocols/core/types.js';

const { values: argv } = parseArgs({ options: { streams: { type: 'string' } } });
const STREAMS = Number(argv.streams ?? 20000);

const schema = (n) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(80) }])),
  required: ['p0'],
});
const TOOLS = Array.from({ length: 17 }, (_, i) => ({ type: 'function', function: { name: `Tool${i}`, description: 'd'.repeat(400), parameters: schema(6) } }));
const tier = { name: 'local', tool_text: 'auto' };
const place = { name: 'local', isLast: () => false };
const chunk = (delta, finish = null) =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const EVENTS = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Sure' }), ...Array.from({ length: 8 }, (_, i) => chunk({ content: ` word${i}` }))];
const RAWS = EVENTS.map((data) => Buffer.from(`data: ${data}\n\n`));

function request() {
  const parsed = chatClient.parse({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }], tools: TOOLS }, {});
  return parsed.request;
}

/** µs to the first content event, and µs for the later events, of one stream. */
function stream(withToolText) {
  const req = request();
  const t0 = performance.now();
  let reader = chatWire.reader();
  let output = chatClient.relay(req);
  if (withToolText) {
    const scope = toolTextScope(tier, req, chatClient);
    reader = new TextCallReader(reader, scope, place);
    output = new TextCallOutput(output, () => chatClient.renderer(req), chatClient.handover(req));
  }
  const facts = newFacts();
  let first = 0;
  for (let i = 0; i < EVENTS.length; i++) {
    reader.read(EVENTS[i], facts);
    output.event(facts, RAWS[i]);
    if (i === 1) first = performance.now();
  }
  return [first - t0, performance.now() - first];
}

function run(withToolText) {
  const firsts = [];
  let later = 0;
  for (let i = 0; i < STREAMS; i++) {
    const [a, b] = stream(withToolText);
    firsts.push(a);
    later += b;
  }
  firsts.sort((x, y) => x - y);
  return {
    p50: firsts[Math.floor(firsts.length / 2)] * 1000,
    mean: (firsts.reduce((s, x) => s + x, 0) / firsts.length) * 1000,
    later: (later / STREAMS / (EVENTS.length - 2)) * 1000,
  };
}

for (let round = 0; round < 2; round++) run(round % 2 === 0); // warm-up
const base = run(false);
const tool = run(true);
const fmt = (n) => n.toFixed(2).padStart(7);
console.log(`streams: ${STREAMS}, 17 tools, events: role + first content + ${EVENTS.length - 2}`);
console.log(`                 to first content p50   mean (µs)   per later event (µs)`);
console.log(`relay today      ${fmt(base.p50)}          ${fmt(base.mean)}      ${fmt(base.later)}`);
console.log(`with tool text   ${fmt(tool.p50)}          ${fmt(tool.mean)}      ${fmt(tool.later)}`);
console.log(`difference       ${fmt(tool.p50 - base.p50)}          ${fmt(tool.mean - base.mean)}      ${fmt(tool.later - base.later)}`);

// A held call: the time its closing event takes (recovery, schema check, rendering), the first
// time in the process (ajv loaded, the schema compiled) and once its schema is compiled.
const HERMES = '<tool_call>\n{"name": "Tool3", "arguments": {"p0": "ls -la", "p1": "x"}}\n</tool_call>';
const PIECES = HERMES.match(/.{1,6}/gs);
function heldCall() {
  const req = request();
  const scope = toolTextScope(tier, req, chatClient);
  const reader = new TextCallReader(chatWire.reader(), scope, place);
  const output = new TextCallOutput(chatClient.relay(req), () => chatClient.renderer(req), chatClient.handover(req));
  const facts = newFacts();
  const events = [chunk({ role: 'assistant', content: '' }), ...PIECES.map((content) => chunk({ content }))];
  for (let i = 0; i < events.length - 1; i++) {
    reader.read(events[i], facts);
    output.event(facts, Buffer.from(events[i]));
  }
  const t0 = performance.now();
  reader.read(events.at(-1), facts);
  const out = output.event(facts, Buffer.from(events.at(-1)));
  const ms = performance.now() - t0;
  if (!String(out).includes('"tool_calls"')) throw new Error('the call was not converted');
  return ms;
}
// The first request with tools loads ajv on the next turn of the event loop (warmSchemaChecks), while the model writes.
await new Promise((resolve) => setImmediate(resolve));
const cold = heldCall();
const warm = Array.from({ length: 2000 }, heldCall).sort((a, b) => a - b);
console.log(
  `held call, closing event: first of its schema ${cold.toFixed(2)} ms (compiled; ajv loaded earlier, off the request); then p50 ${warm[1000].toFixed(3)} ms, p99 ${warm[1980].toFixed(3)} ms`,
);
