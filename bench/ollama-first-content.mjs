#!/usr/bin/env node
// An Ollama client's and a Gemini client's stream beside a Chat Completions client's, through one
// `llm-route serve`, on the same two tiers: an openai-type mock (Chat is relayed there, Ollama's
// /api/chat and Gemini's streamGenerateContent translated) and an ollama-type mock (/api/chat
// relayed, Chat and Gemini translated). Each mock sends its whole answer at once, so what is
// measured is what the proxy does before the first content leaves: time to the first content, one
// stream at a time, in alternating rounds. The ratios /api/chat ÷ Chat and Gemini ÷ Chat per tier
// are what docs/performance.md quotes for Ollama's and Gemini's APIs (goal: within 1.1×).
//
//   npm run build && node bench/ollama-first-content.mjs [--tokens 100] [--rounds 8] [--streams 200]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { installCleanup, startMock, startServe, stopAll } from './overhead/processes.mjs';
import { median, percentile } from './overhead/stats.mjs';

const { values: argv } = parseArgs({ options: { tokens: { type: 'string' }, rounds: { type: 'string' }, streams: { type: 'string' } } });
const TOKENS = Number(argv.tokens ?? 100);
const ROUNDS = Number(argv.rounds ?? 8);
const STREAMS = Number(argv.streams ?? 200);

installCleanup();

const openaiMock = await startMock('fast', ['--tokens', String(TOKENS)]);
const ollamaMock = await startMock('fast', ['--protocol', 'ollama', '--tokens', String(TOKENS)]);
const tmp = mkdtempSync(join(tmpdir(), 'llm-route-ollama-first-'));
const config = join(tmp, 'tiers.yaml');
writeFileSync(
  config,
  [
    'version: 1',
    'server: { port: 0 }',
    `usage: { path: ${JSON.stringify(join(tmp, 'usage.db'))} }`,
    'providers:',
    `  openai: { type: openai, base_url: ${JSON.stringify(openaiMock.url)}, health: { warmup: false } }`,
    `  ollama: { type: ollama, base_url: ${JSON.stringify(ollamaMock.url.replace(/\/v1$/, ''))}, health: { warmup: false } }`,
    'routes:',
    '  openai: { tiers: [ { provider: openai, model: m } ] }',
    '  ollama: { tiers: [ { provider: ollama, model: m } ] }',
    '',
  ].join('\n'),
);
const serve = await startServe(config);
const origin = new URL(serve.url).origin;

const messages = [{ role: 'user', content: 'Say hello.' }];
/** The first content of each protocol's stream: a Chat chunk's delta.content, an Ollama line's message.content. */
const CLIENTS = {
  chat: {
    path: () => '/v1/chat/completions',
    body: (model) => JSON.stringify({ model, stream: true, messages }),
    split: '\n\n',
    content: chatContent,
    done: (e) => e === 'data: [DONE]',
  },
  ollama: {
    path: () => '/api/chat',
    body: (model) => JSON.stringify({ model, messages }),
    split: '\n',
    content: ollamaContent,
    done: (e) => e.includes('"done":true'),
  },
  gemini: {
    path: (model) => `/v1beta/models/${model}:streamGenerateContent?alt=sse`,
    body: () => JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }] }),
    split: '\r\n\r\n',
    content: geminiContent,
    done: (e) => e.includes('"finishReason"'),
  },
};

function chatContent(event) {
  if (!event.startsWith('data: {')) return false;
  return Boolean(JSON.parse(event.slice(6)).choices?.[0]?.delta?.content);
}

function geminiContent(event) {
  if (!event.startsWith('data: {')) return false;
  return Boolean(JSON.parse(event.slice(6)).candidates?.[0]?.content?.parts?.[0]?.text);
}

function ollamaContent(event) {
  return event.startsWith('{') && Boolean(JSON.parse(event).message?.content);
}

/** One stream: ms from just before the request to the chunk holding its first content; NaN on a failure. */
async function firstContent(pool, client, model) {
  const t0 = performance.now();
  let ttfc = Number.NaN;
  let done = false;
  const res = await pool.request({ method: 'POST', path: client.path(model), headers: { 'content-type': 'application/json' }, body: client.body(model) });
  res.body.setEncoding('utf8');
  let buffer = '';
  for await (const text of res.body) {
    buffer += text;
    let end;
    while ((end = buffer.indexOf(client.split)) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + client.split.length);
      if (Number.isNaN(ttfc) && client.content(event)) ttfc = performance.now() - t0;
      if (client.done(event)) done = true;
    }
  }
  return res.statusCode === 200 && done ? ttfc : Number.NaN;
}

const pairs = [];
for (const tier of ['openai', 'ollama'])
  for (const protocol of ['chat', 'ollama', 'gemini'])
    pairs.push({ tier, protocol, label: `${{ chat: 'Chat', ollama: '/api/chat', gemini: 'Gemini' }[protocol]} → ${tier} tier` });

async function p50Of(pair, count) {
  const pool = new Pool(origin, { connections: 1, pipelining: 1, keepAliveTimeout: 30_000 });
  const times = [];
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const ms = await firstContent(pool, CLIENTS[pair.protocol], pair.tier);
    if (Number.isNaN(ms)) failed++;
    else times.push(ms);
  }
  await pool.close();
  if (failed > 0) console.error(`${pair.label}: ${failed} failed streams`);
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

for (const pair of pairs) await p50Of(pair, 30); // warm-up
const p50s = new Map(pairs.map((pair) => [pair, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const pair of r % 2 === 0 ? pairs : [...pairs].reverse()) p50s.get(pair).push(await p50Of(pair, STREAMS));
  console.log(`round ${r + 1}: ${pairs.map((p) => `${p.label} ${p50s.get(p).at(-1).toFixed(3)} ms`).join(', ')}`);
}

const of = (tier, protocol) => median(p50s.get(pairs.find((p) => p.tier === tier && p.protocol === protocol)));
console.log(`\n${TOKENS} tokens in one burst, ${ROUNDS} rounds of ${STREAMS} streams; medians of each round's p50:\n`);
console.log('| tier | Chat stream, ms | /api/chat stream, ms | Gemini stream, ms | /api/chat ÷ Chat | Gemini ÷ Chat |');
console.log('|---|---|---|---|---|---|');
for (const [tier, how] of [
  ['openai', 'Chat relayed, /api/chat and Gemini translated'],
  ['ollama', 'Chat and Gemini translated, /api/chat relayed'],
]) {
  const chat = of(tier, 'chat');
  const ollama = of(tier, 'ollama');
  const gemini = of(tier, 'gemini');
  console.log(
    `| ${tier} (${how}) | ${chat.toFixed(3)} | ${ollama.toFixed(3)} | ${gemini.toFixed(3)} | ${(ollama / chat).toFixed(2)}× | ${(gemini / chat).toFixed(2)}× |`,
  );
}
await stopAll();
