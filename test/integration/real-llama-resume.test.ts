import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { requestLog, useHarness } from '../helpers/harness.js';

/**
 * Mid-stream recovery against two real llama.cpp servers (../shared/real-llama/start.sh),
 * the first killed with SIGKILL mid-answer. Opt-in, since it needs the built llama-server and
 * kills a process: REAL_LLAMA_PORTS=8201,8202 npx vitest run test/integration/real-llama-resume.test.ts
 * (both started first; the killed one is started again for the next case).
 */
const PORTS = process.env.REAL_LLAMA_PORTS?.split(',').map(Number) ?? [];
const DIR = process.env.LLAMA_DIR ?? '/tmp/real-llama';
const START = process.env.REAL_LLAMA_START ?? '/work/shared/real-llama/start.sh';
const h = useHarness();
/** A CPU-only model on a shared machine: seconds per token at worst. */
const SLOW_MACHINE = { ttft_ms: 120_000, idle_ms: 60_000 };
const KILL_AT_CHUNK = 8;
const PARAMS = { model: 'chat', temperature: 0, seed: 7, max_tokens: 30, messages: [{ role: 'user' as const, content: 'Tell me a long story about a fox.' }] };

async function reference(port: number): Promise<string> {
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'x', maxRetries: 0 });
  const answer = await client.chat.completions.create({ ...PARAMS, model: 'tiny', stream: false });
  return answer.choices[0].message.content ?? '';
}

/** Starts the server on `port` again when it is not answering (a previous case killed it). */
async function ensureRunning(port: number): Promise<void> {
  const up = await fetch(`http://127.0.0.1:${port}/health`).then(
    (r) => r.ok,
    () => false,
  );
  if (!up) execFileSync(START, [String(port)], { stdio: 'ignore' });
}

function killHard(port: number): void {
  process.kill(Number(readFileSync(`${DIR}/llama-server.${port}.pid`, 'utf8')), 'SIGKILL');
}

type Client = 'chat' | 'messages';

/** The answer's text deltas as the client's SDK yields them (Chat chunks, or Messages text deltas). */
async function* textDeltas(client: Client, origin: string): AsyncGenerator<string> {
  if (client === 'chat') {
    const openai = new OpenAI({ baseURL: `${origin}/v1`, apiKey: 'x', maxRetries: 0 });
    for await (const chunk of await openai.chat.completions.create({ ...PARAMS, stream: true })) yield chunk.choices[0]?.delta.content ?? '';
    return;
  }
  const anthropic = new Anthropic({ baseURL: origin, apiKey: 'x', maxRetries: 0 });
  const stream = anthropic.messages.stream({ model: 'chat', temperature: 0, max_tokens: PARAMS.max_tokens, messages: PARAMS.messages });
  for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') yield event.delta.text;
  await stream.finalMessage(); // raises if the stream did not complete
}

async function killedMidAnswer(
  prefillOnSecond: boolean,
  client: Client = 'chat',
): Promise<{ text: string; chunksBeforeKill: number; line: Record<string, unknown> }> {
  const [a, b] = PORTS;
  await ensureRunning(a);
  const proxy = await h.proxy({
    tiers: [
      { name: 'llama_a', url: `http://127.0.0.1:${a}/v1`, model: 'tiny', retry: { attempts: 1 }, timeouts: SLOW_MACHINE },
      { name: 'llama_b', url: `http://127.0.0.1:${b}/v1`, model: 'tiny', extra: { prefill: prefillOnSecond }, timeouts: SLOW_MACHINE },
    ],
    deadline_ms: 300_000,
    routeKeys: { on_break: 'resume' },
  });
  let text = '';
  let chunks = 0;
  let chunksBeforeKill = 0;
  for await (const delta of textDeltas(client, proxy.origin)) {
    text += delta;
    if (++chunks === KILL_AT_CHUNK) {
      chunksBeforeKill = chunks;
      killHard(a);
    }
  }
  return { text, chunksBeforeKill, line: await requestLog(proxy, 10_000) };
}

describe.skipIf(PORTS.length !== 2)('mid-stream recovery with real llama-servers, the first killed -9 mid-answer', () => {
  it('continues on the second (prefill): the client gets the whole answer, the same as an unbroken one', async () => {
    const expected = await reference(PORTS[1]);
    const { text, chunksBeforeKill, line } = await killedMidAnswer(true);
    console.log('real llama continuation:', JSON.stringify({ chunksBeforeKill, resumed: line.resumed, attempts: line.attempts, chars: text.length }));
    expect(chunksBeforeKill).toBe(KILL_AT_CHUNK);
    expect(text).toBe(expected);
    expect(line.outcome).toBe('ok');
    expect(line.resumed).toMatchObject({ from: 'llama_a', to: 'llama_b', how: 'continue', result: 'ok' });
  }, 300_000);

  it('a Messages client (translated both ways) gets the whole answer as one message', async () => {
    const expected = await reference(PORTS[1]);
    const { text, line } = await killedMidAnswer(true, 'messages');
    console.log('real llama continuation, messages client:', JSON.stringify({ resumed: line.resumed, chars: text.length }));
    expect(text).toBe(expected);
    expect(line.resumed).toMatchObject({ how: 'continue', result: 'ok' });
  }, 300_000);

  it('replays on the second (no prefill): a deterministic replay is verified and relayed past the prefix', async () => {
    const expected = await reference(PORTS[1]);
    const { text, line } = await killedMidAnswer(false);
    console.log('real llama replay:', JSON.stringify({ resumed: line.resumed, attempts: line.attempts, chars: text.length }));
    expect(text).toBe(expected);
    expect(line.resumed).toMatchObject({ from: 'llama_a', to: 'llama_b', how: 'replay', result: 'ok' });
  }, 300_000);
});
