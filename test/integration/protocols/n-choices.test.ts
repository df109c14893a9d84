import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { Script } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { chat, sseEvents } from '../../helpers/proxy.js';

/** `n > 1`: every choice reaches the client intact, streamed or not. */

const h = useHarness();
const base = { id: 'chatcmpl-n', created: 1700000000, model: 'fake-model' };

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({ ...base, object: 'chat.completion.chunk', choices, ...extra });
/** Two choices interleaved; choice 0 finishes while choice 1 still has words to send. */
const STREAM = [
  chunk([
    { index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null },
    { index: 1, delta: { role: 'assistant', content: '' }, finish_reason: null },
  ]),
  chunk([{ index: 1, delta: { content: 'Second' }, finish_reason: null }]),
  chunk([{ index: 0, delta: { content: 'First' }, finish_reason: null }]),
  chunk([
    { index: 0, delta: { content: ' done.' }, finish_reason: null },
    { index: 1, delta: { content: ' goes' }, finish_reason: null },
  ]),
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
  chunk([{ index: 1, delta: { content: ' on, then stops.' }, finish_reason: null }]),
  chunk([{ index: 1, delta: {}, finish_reason: 'length' }]),
];
const USAGE = chunk([], { usage: { prompt_tokens: 4, completion_tokens: 9, total_tokens: 13 } });

const twoChoicesStream: Script = async (ctx) => {
  ctx.startStream();
  for (const [i, event] of STREAM.entries()) {
    if (i === 5) await ctx.wait(30); // the rest of choice 1 comes after choice 0 has finished
    ctx.event(event);
  }
  ctx.event(USAGE);
  ctx.done();
};

const twoChoicesWhole = {
  ...base,
  object: 'chat.completion',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'First answer.' }, finish_reason: 'stop', logprobs: null },
    { index: 1, message: { role: 'assistant', content: 'Second answer, longer.' }, finish_reason: 'length', logprobs: null },
  ],
  usage: { prompt_tokens: 4, completion_tokens: 7, total_tokens: 11 },
};

describe('n > 1 choices', () => {
  it("a stream relays every choice's deltas and finish reasons, in order (OpenAI SDK)", async () => {
    const up = await h.fake();
    up.always(twoChoicesStream);
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });
    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], n: 2, stream: true });
    const text = ['', ''];
    const finish: Array<string | null> = [null, null];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        text[choice.index] += choice.delta.content ?? '';
        if (choice.finish_reason) finish[choice.index] = choice.finish_reason;
      }
    }
    expect(text).toEqual(['First done.', 'Second goes on, then stops.']);
    expect(finish).toEqual(['stop', 'length']);
    expect(up.requests[0].body.n).toBe(2);
  });

  it("a stream's events reach the client byte for byte, usage chunk hidden when not asked for", async () => {
    const up = await h.fake();
    up.always(twoChoicesStream);
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });
    const res = await chat(p, { n: 2, stream: true });
    const text = await res.text();
    expect(text).toBe(`${STREAM.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`);
    const chunks = sseEvents(text).slice(0, -1) as Array<{ choices: Array<{ index: number }> }>;
    expect(chunks.map((c) => c.choices.map((choice) => choice.index))).toEqual([[0, 1], [1], [0], [0, 1], [0], [1], [1]]);
  });

  it('a whole answer keeps both choices exactly as the upstream sent them', async () => {
    const up = await h.fake();
    up.always((ctx) => ctx.json(200, twoChoicesWhole));
    const p = await h.proxy({ tiers: [{ name: 'local', url: up.url }] });
    const res = await chat(p, { n: 2 });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify(twoChoicesWhole));

    const client = new OpenAI({ baseURL: p.baseURL, apiKey: 'x', maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], n: 2 });
    expect(answer.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, 'First answer.', 'stop'],
      [1, 'Second answer, longer.', 'length'],
    ]);
    expect(up.requests.map((r) => r.body.n)).toEqual([2, 2]);
  });
});
