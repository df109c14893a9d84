import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/mock/random.js';
import { pacedStream, SIXTY, type UpstreamWire } from '../../helpers/cadence-scripts.js';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness } from '../../helpers/harness.js';
import { streamWith } from '../../helpers/resume-clients.js';

// The learned stall's defaults (docs/recovery.md) must never cut a healthy stream: real sockets,
// seeded jittered cadences, every one through a resume route whose second tier would show a cut.
const h = useHarness();

async function resumeRoute(gapMs: (i: number) => number, words: string[], wire: UpstreamWire = 'openai') {
  const a = await h.fake();
  const b = await h.fake();
  a.always(pacedStream(words, gapMs, wire));
  b.always(healthyStream(['cut']));
  const proxy = await h.proxy({
    tiers: [
      { name: 'a', url: a.url, type: wire },
      { name: 'b', url: b.url },
    ],
    routeKeys: { on_break: 'resume' },
  });
  return { b, proxy };
}

/** Streams through the route and checks it arrived whole, from the first tier alone. */
async function arrivesWhole(gapMs: (i: number) => number, words: string[], wire: UpstreamWire = 'openai'): Promise<void> {
  const { b, proxy } = await resumeRoute(gapMs, words, wire);
  const seen = await streamWith('chat', proxy);
  expect(seen.failed).toBeNull();
  expect(seen.text).toBe(words.join(''));
  expect(b.requests).toHaveLength(0);
  const line = await requestLog(proxy);
  expect(line.outcome).toBe('ok');
  expect(line.resumed).toBeUndefined();
}

describe('healthy streams through a resume route are never cut', () => {
  it('a CPU model at about 2 tokens/s (jittered 0.25–0.75 s) that pauses 4 s to think, once its pace is known', async () => {
    const random = createRandom(2);
    // 16 gaps of ~0.5 s (stall.after) set a median that allows 20 × 0.5 s = 10 s of silence: a 4 s pause is the model working.
    await arrivesWhole((i) => (i === 17 ? 4_000 : 250 + random() * 500), SIXTY.slice(0, 19));
  }, 60_000);

  it('concurrently: a fast stream (10–60 ms) pausing just under stall.floor_ms, on the Chat, Messages and Ollama wires', async () => {
    const cadence = (seed: number) => {
      const random = createRandom(seed);
      return (i: number) => (i % 25 === 24 ? 1_800 : 10 + random() * 50);
    };
    await Promise.all([arrivesWhole(cadence(3), SIXTY), arrivesWhole(cadence(4), SIXTY, 'anthropic'), arrivesWhole(cadence(5), SIXTY, 'ollama')]);
  }, 60_000);

  it('a model that slows as its answer grows (10 ms a token, then up to 1.5 s): the median follows, nothing is cut', async () => {
    await arrivesWhole((i) => (i < 20 ? 10 : Math.min(1_500, 10 * 1.4 ** (i - 19))), SIXTY.slice(0, 36));
  }, 60_000);
});

describe('on_break: error keeps idle_ms as its only limit', () => {
  it('a stream that came every 15 ms and then pauses 3 s (past stall.floor_ms) is not cut', async () => {
    const a = await h.fake();
    a.always(pacedStream(SIXTY.slice(0, 30), (i) => (i === 25 ? 3_000 : 15)));
    const proxy = await h.proxy({ tiers: [{ name: 'a', url: a.url }] });
    const seen = await streamWith('chat', proxy);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(SIXTY.slice(0, 30).join(''));
  }, 30_000);
});
