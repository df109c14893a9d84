import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { healthyStream } from '../../helpers/fake-upstream.js';
import { requestLog, useHarness, waitFor } from '../../helpers/harness.js';
import { streamWith } from '../../helpers/resume-clients.js';
import { WORDS } from '../../helpers/resume-scripts.js';
import { realLlamaBuilt, startRealLlama } from '../../helpers/real-llama.js';

/**
 * A hedge against a real llama.cpp server (scripts/real-llama/): a long prompt makes its prefill
 * take seconds on 2 cores (a real slow first tier); the hedge to a fake that answers in 100 ms
 * commits, and the llama-server request is cancelled (its log says `cancel task`). Skipped when
 * the llama-server build is absent; the server is this test's own, on a free port.
 */
const h = useHarness();
/** ≈ 1,800 tokens: seconds of prefill at ≈ 440 tok/s. */
const LONG_PROMPT = Array.from({ length: 200 }, () => 'the quick brown fox jumps over the lazy dog').join(' ');

describe.skipIf(!realLlamaBuilt())('hedging against a real llama-server', () => {
  it('the slow prefill loses to the hedge: the fake commits, llama-server cancels its task', async () => {
    const llama = await startRealLlama();
    h.defer(() => llama.stop());
    const logFrom = statSync(llama.log).size;
    const fake = await h.fake();
    fake.always(healthyStream(WORDS, { delayMs: 10 }));
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: llama.url, model: 'tiny', timeouts: { ttft_ms: 60_000, cold_ttft_ms: 60_000 } },
        { name: 'fake', url: fake.url },
      ],
      routeKeys: { hedge_ms: 300 },
    });
    const seen = await streamWith('chat', proxy, LONG_PROMPT);
    expect(seen.failed).toBeNull();
    expect(seen.text).toBe(WORDS.join(''));
    const line = await requestLog(proxy);
    expect(line.hedged).toMatchObject({ winner: 'fake', loser: 'llama' });
    expect(line.attempts).toEqual([
      expect.objectContaining({ tier: 'llama', outcome: 'hedge_lost' }),
      expect.objectContaining({ tier: 'fake', outcome: 'ok' }),
    ]);
    // The closed socket reached llama-server: it cancelled the slot's task.
    await waitFor(() => readFileSync(llama.log, 'utf8').slice(logFrom).includes('cancel task'), 10_000, 'llama-server to cancel the task');
  }, 60_000);
});
