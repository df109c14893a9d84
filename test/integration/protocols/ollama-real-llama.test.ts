import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { type RealLlama, realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';

/**
 * ollama-js in front of a real llama.cpp llama-server (random weights, real server, see
 * scripts/real-llama/): Ollama's API translated to the server's Chat Completions and back,
 * streamed and whole, behind a first tier that refuses connections. Skipped without the build.
 */
const available = realLlamaBuilt();
const h = useHarness();
let llama: RealLlama | undefined;

beforeAll(async () => {
  if (available) llama = await startRealLlama(['-c', '2048']);
}, 200_000);

afterAll(async () => {
  await llama?.stop();
}, 30_000);

async function ollamaClient() {
  const proxy = await h.proxy({
    tiers: [
      { name: 'gone', url: 'http://127.0.0.1:1/v1' },
      { name: 'llama', url: llama!.url, model: 'tiny', timeouts: { ttft_ms: 120_000, idle_ms: 60_000 } },
    ],
  });
  return { proxy, ollama: new Ollama({ host: proxy.origin }) };
}

describe.skipIf(!available)('ollama-js against a real llama-server (translated)', () => {
  it('chat streams lines that end in done with the server’s own counts; the dead first tier is never seen', async () => {
    const { proxy, ollama } = await ollamaClient();
    const stream = await ollama.chat({
      model: 'chat',
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      options: { num_predict: 8, temperature: 0, seed: 1 },
    });
    const parts = [];
    for await (const part of stream) parts.push(part);
    const last = parts.at(-1)!;
    expect(last).toMatchObject({ model: 'tiny', done: true, done_reason: 'length' }); // the model that answered (docs/protocols.md)
    expect(last.eval_count).toBe(8);
    expect(last.prompt_eval_count).toBeGreaterThan(0);
    expect(parts.slice(0, -1).every((p) => p.done === false && typeof p.message.content === 'string')).toBe(true);
    const log = await requestLog(proxy);
    expect(log).toMatchObject({ protocol: 'ollama', tier: 'llama', outcome: 'ok', usage: { completion_tokens: 8 } });
    expect((log.attempts as Array<{ tier: string; outcome: string }>).map((a) => [a.tier, a.outcome])).toEqual([
      ['gone', 'connection_refused'],
      ['llama', 'ok'],
    ]);
  }, 120_000);

  it('chat whole and generate (streamed and whole): what the server wrote, in Ollama’s shapes', async () => {
    const { ollama } = await ollamaClient();
    const whole = await ollama.chat({
      model: 'chat',
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: false,
      options: { num_predict: 6, seed: 1 },
    });
    expect(whole).toMatchObject({ done: true, done_reason: 'length', eval_count: 6, message: { role: 'assistant' } });
    expect(whole.message.content.length).toBeGreaterThan(0);
    const stream = await ollama.generate({ model: 'chat', system: 'Be brief.', prompt: 'Why is the sky blue?', stream: true, options: { num_predict: 5 } });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'length', eval_count: 5, response: '' });
    expect(
      parts
        .slice(0, -1)
        .map((p) => p.response)
        .join('').length,
    ).toBeGreaterThan(0);
    const generated = await ollama.generate({ model: 'chat', prompt: 'Sky?', stream: false, options: { num_predict: 4 } });
    expect(generated).toMatchObject({ done: true, eval_count: 4 });
  }, 120_000);
});
