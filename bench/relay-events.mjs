#!/usr/bin/env node
// A committed stream's per-event work in the relay, in process (no sockets, no 10 ms CPU ticks):
// Chat chunks of one token each, one chunk per turn (as a local server streams), through
// StreamRelay — framing, reading, the silence guard, the output, the client writer — on a
// default route (on_break: error) and on a resume route (the learned stall's pace kept per chunk),
// for this build and optionally another (`--other <checkout>`, built), in CPU µs per event. Cases
// alternate per round.
//
//   npm run build && node bench/relay-events.mjs [--events N] [--rounds N] [--other ../before]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values: argv } = parseArgs({ options: { events: { type: 'string' }, rounds: { type: 'string' }, other: { type: 'string' } } });
const EVENTS = Number(argv.events ?? 200_000);
const ROUNDS = Number(argv.rounds ?? 7);
const TOKENS = 100;

/** One build's modules, from its dist/. */
async function build(root) {
  const at = (path) => import(pathToFileURL(resolve(root, 'dist', path)).href);
  const [{ clientCodec }, { UpstreamCall }, { StreamRelay }, { StreamTally }, { ResumeState }, { TelemetryBus }] = await Promise.all([
    at('protocols/registry.js'),
    at('protocols/call.js'),
    at('proxy/stream-relay.js'),
    at('proxy/stream-tally.js'),
    at('proxy/resume/resume-state.js'),
    at('telemetry/bus.js'),
  ]);
  return { clientCodec, UpstreamCall, StreamRelay, StreamTally, ResumeState, TelemetryBus };
}

const provider = { name: 'p', type: 'openai', base_url: 'http://127.0.0.1:1/v1', local: true, health: {} };
const timeouts = { connect_ms: 2_000, ttft_ms: 10_000, idle_ms: 30_000, total_ms: 300_000, stream_max_ms: 0 };
const tier = { name: 't', route: 'chat', provider, model: 'm', max_tokens: 4096, ollama: {}, prefill: true, timeouts };
const STALL = { factor: 20, floor_ms: 2_000, after: 16 };
const event = (delta) =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":null}]}\n\n`;
const chunks = Array.from({ length: TOKENS }, (_, i) => Buffer.from(event({ content: ` word${i}` })));
const first = Buffer.from(event({ content: 'Hi' }));
const end = Buffer.from(`${event({}).replace('"finish_reason":null', '"finish_reason":"stop"')}data: [DONE]\n\n`);
const dispatch = { elapsedMs: 0, pause() {}, resume() {}, cancel() {}, lingerFor() {}, finish() {} };
const sink = { write: () => true, onceDrain() {}, sendNow() {}, end() {} };
const client = { aborted: false };

/** µs per event (chunk) through the relay, for streams of TOKENS chunks. */
async function run(m, resume) {
  const codec = m.clientCodec('chat');
  const parsed = codec.parse({ model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }, {});
  const request = parsed.request;
  const call = m.UpstreamCall.prepare(tier, codec, request, null);
  const telemetry = new m.TelemetryBus();
  let events = 0;
  // CPU time, not wall time: on a shared machine the wait for a core is not the relay's work.
  const t0 = process.cpuUsage();
  while (events < EVENTS) {
    const state = resume ? new m.ResumeState(call, codec, request, STALL) : null;
    const input = { tier, client, output: state ? state.output : call.streamOutput(), keepOpen: state?.keepOpen, stall: state?.stall };
    const relay = new m.StreamRelay(input, dispatch, call.wire.framer(), new m.StreamTally(call.streamReader(), telemetry, 'chat', 't'), sink, first);
    for (const chunk of chunks) {
      relay.onBody(chunk);
      await null; // the next chunk arrives in a later turn: the writer's queued write goes out between
    }
    relay.onBody(end);
    relay.onEnd();
    await relay.finished;
    events += TOKENS + 2;
  }
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / events;
}

const builds = [{ label: 'this build', m: await build('.') }];
if (argv.other) builds.push({ label: `other (${argv.other})`, m: await build(argv.other) });
const cases = builds.flatMap((b) => [false, true].map((resume) => ({ name: `${b.label}, ${resume ? 'resume' : 'error'}`, m: b.m, resume })));
for (const c of cases) await run(c.m, c.resume); // warm-up
const results = new Map(cases.map((c) => [c.name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const c of r % 2 === 0 ? cases : [...cases].reverse()) results.get(c.name).push(await run(c.m, c.resume));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${EVENTS} events per case and round (streams of ${TOKENS} one-token chunks), ${ROUNDS} rounds, CPU µs per event (median):`);
for (const [name, values] of results) console.log(`  ${name.padEnd(40)} ${median(values).toFixed(3)} µs   (${values.map((v) => v.toFixed(2)).join(' ')})`);
