import { describe, expect, it } from 'vitest';
import { SIXTY, stallsAfter, type UpstreamWire } from '../../helpers/cadence-scripts.js';
import { chunk, type Script } from '../../helpers/fake-upstream.js';
import { readAll, requestLog, socketClosed, useHarness } from '../../helpers/harness.js';
import { chat, errorEvents } from '../../helpers/proxy.js';

// docs/routing.md, "After commit": idle_ms is time without content. An upstream that sent three
// words and then only keep-alives every 400 ms kept the client's stream open until the client
// gave up; now it ends idle_ms after the last word, the keep-alives relayed until then.
const h = useHarness();

async function threeWordsThen(script: Script, wire: UpstreamWire = 'openai') {
  const a = await h.fake();
  a.always(script);
  const proxy = await h.proxy({ tiers: [{ name: 'a', url: a.url, type: wire, timeouts: { idle_ms: 3_000 } }] });
  const started = performance.now();
  const res = await chat(proxy, { stream: true });
  const { text } = await readAll(res);
  return { a, proxy, text, ms: performance.now() - started };
}

/** Three words, then the same keep-alive every 400 ms until llm-route hangs up. */
function keepAliveOnly(keepAlive: string): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const word of ['The ', 'quick ', 'brown ']) ctx.content(word);
    while (!ctx.isClosed()) {
      await ctx.wait(400);
      if (!ctx.isClosed()) ctx.raw(keepAlive);
    }
  };
}

describe('on_break: error, idle_ms 3000: three words, then keep-alives every 400 ms', () => {
  it.each([
    ['SSE comments', ': keep-alive\n\n'],
    ['empty content deltas', `data: ${JSON.stringify(chunk({ content: '' }))}\n\n`],
    ['empty deltas', `data: ${JSON.stringify(chunk({}))}\n\n`],
  ])(
    '%s: the stream ends idle_ms after the last word with stream_interrupted; the keep-alives reached the client',
    async (_name, keepAlive) => {
      const { a, proxy, text, ms } = await threeWordsThen(keepAliveOnly(keepAlive));
      expect(ms).toBeGreaterThan(3_000);
      expect(ms).toBeLessThan(8_000); // not the 15 s a client would have waited, nor forever
      expect(errorEvents(text)).toEqual([{ error: expect.objectContaining({ code: 'stream_interrupted', message: 'llm-route: no content within 3000 ms' }) }]);
      expect(text.split(keepAlive).length - 1).toBeGreaterThanOrEqual(5); // relayed as they came, bytes unchanged
      await socketClosed(a);
      const line = await requestLog(proxy);
      expect(line.outcome).toBe('interrupted');
    },
    30_000,
  );

  it.each<UpstreamWire>(['anthropic', 'ollama'])(
    'an upstream of type %s (pings, empty deltas, empty lines): the same end for a Chat client',
    async (wire) => {
      const { text, ms } = await threeWordsThen(stallsAfter(SIXTY, 3, 10, { wire, keepAliveMs: 400 }), wire);
      expect(ms).toBeGreaterThan(3_000);
      expect(ms).toBeLessThan(8_000);
      expect(errorEvents(text)).toMatchObject([{ error: { code: 'stream_interrupted', message: 'llm-route: no content within 3000 ms' } }]);
    },
    30_000,
  );

  it('words with keep-alives between them, each word within idle_ms: never cut', async () => {
    const slow: Script = async (ctx) => {
      ctx.startStream();
      ctx.role();
      for (const word of ['One ', 'two ', 'three ', 'four.']) {
        ctx.content(word);
        for (let k = 0; k < 6; k++) {
          await ctx.wait(400);
          ctx.raw(': keep-alive\n\n');
        }
      }
      ctx.finish();
      ctx.done();
    };
    const { text, ms } = await threeWordsThen(slow);
    expect(ms).toBeGreaterThan(9_000);
    expect(errorEvents(text)).toEqual([]);
    expect(text).toContain('data: [DONE]');
  }, 30_000);
});
