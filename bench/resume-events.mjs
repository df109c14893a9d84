#!/usr/bin/env node
// The per-event work `on_break: resume` adds to an unbroken stream, in process (no sockets, no
// 10 ms CPU ticks): each upstream event framed, read and handed to the stream output, as
// the relay does, with the default output (Chat: the byte relay; Messages: translated) against
// the resume route's (the same plus the delivered-text decoder). Cases alternate within a run.
//
//   npm run build && node bench/resume-events.mjs [--events N] [--rounds N]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { clientCodec, wireCodec } from '../dist/protocols/registry.js';
import { newFacts } from '../dist/protocols/core/types.js';
import { UpstreamCall } from '../dist/protocols/call.js';
import { ResumeState } from '../dist/proxy/resume/resume-state.js';

const { values: argv } = parseArgs({ options: { events: { type: 'string' }, rounds: { type: 'string' } } });
const EVENTS = Number(argv.events ?? 200_000);
const ROUNDS = Number(argv.rounds ?? 7);

const provider = { name: 'p', type: 'openai', base_url: 'http://127.0.0.1:1/v1', local: true, health: {} };
const tier = { name: 't', provider, model: 'm', max_tokens: 4096, ollama: {}, prefill: true };
const chunk = (text) =>
  `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`;
const bytes = Buffer.from(Array.from({ length: 100 }, (_, i) => chunk(` word${i}`)).join(''));

function requestFor(protocol) {
  const body =
    protocol === 'chat'
      ? { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }
      : { model: 'chat', stream: true, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
  const parsed = clientCodec(protocol).parse(body, {});
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
}

/** µs per event through framer, reader and output, for streams of 100 events. */
function run(protocol, resume) {
  const codec = clientCodec(protocol);
  const request = requestFor(protocol);
  const call = UpstreamCall.prepare(tier, codec, request);
  const wire = wireCodec('chat');
  let events = 0;
  let sink = 0;
  const t0 = performance.now();
  while (events < EVENTS) {
    const output = resume ? new ResumeState(call, codec, request).output : call.streamOutput();
    const framer = wire.framer();
    const facts = newFacts();
    const reader = wire.reader();
    framer.push(bytes, (_raw, data) => {
      if (data === null) return;
      reader.read(data, facts);
      const out = output.event(facts);
      sink += typeof out === 'symbol' ? 1 : out ? out.length : 0;
      events++;
    });
  }
  if (sink === 0) throw new Error('nothing went out');
  return ((performance.now() - t0) * 1000) / events;
}

for (let i = 0; i < 2; i++)
  for (const p of ['chat', 'messages']) {
    run(p, false);
    run(p, true);
  } // warm-up
const ratios = { chat: [], messages: [] };
for (let r = 0; r < ROUNDS; r++) {
  const line = [];
  for (const p of ['chat', 'messages']) {
    const [off, on] = r % 2 === 0 ? [run(p, false), run(p, true)] : [run(p, true), run(p, false)].reverse();
    ratios[p].push(on / off);
    line.push(`${p} error ${off.toFixed(3)} µs, resume ${on.toFixed(3)} µs (${(on / off).toFixed(2)}×)`);
  }
  console.log(`round ${r + 1}: ${line.join('; ')}`);
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(
  `\n${EVENTS} events per case and round, ${ROUNDS} rounds: resume / error, median of the rounds: chat (byte relay) ${median(ratios.chat).toFixed(3)}×, messages (translated) ${median(ratios.messages).toFixed(3)}×`,
);
