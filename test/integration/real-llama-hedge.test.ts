import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { healthyStream } from '../helpers/fake-upstream.js';
import { requestLog, useHarness, waitFor } from '../helpers/harness.js';
import { streamWith } from '../helpers/resume-clients.js';
import { WORDS } from '../helpers/resume-scripts.js';
import { REAL_LLAMA_DIR, REAL_LLAMA_START, realLlamaBuilt } from '../helpers/real-llama.js';

/**
 * A hedge against a real llama.cpp server (../shared/real-llama/): a long prompt makes its
 * prefill take seconds on 2 cores (a real slow first tier); the hedge to a fake that answers in
 * 100 ms commits, and the llama-server request is cancelled (its log says `cancel task`). Skips
 * when the llama-server build is absent. Uses REAL_LLAMA_HEDGE_PORT (default 8092): a server
 * already answering there is used, else one is started and stopped by this test.
 */
const DIR = REAL_LLAMA_DIR;
const START = REAL_LLAMA_START;
const PORT = Number(process.env.REAL_LLAMA_HEDGE_PORT ?? 8092);
const LOG = `${DIR}/llama-server.${PORT}.log`;
const h = useHarness();
/** ≈ 1,800 tokens: seconds of prefill at ≈ 440 tok/s. */
const LONG_PROMPT = Array.from({ length: 200 }, () => 'the quick brown fox jumps over the lazy dog').join(' ');

const up = (): Promise<boolean> =>
  fetch(`http://127.0.0.1:${PORT}/health`).then(
    (r) => r.ok,
    () => false,
  );

describe.skipIf(!realLlamaBuilt())('hedging against a real llama-server', () => {
  it('the slow prefill loses to the hedge: the fake commits, llama-server cancels its task', async () => {
    if (!(await up())) {
      execFileSync(START, [String(PORT)], { stdio: 'ignore', env: { ...process.env, LLAMA_DIR: DIR } });
      h.defer(() => process.kill(Number(readFileSync(`${DIR}/llama-server.${PORT}.pid`, 'utf8')), 'SIGTERM'));
    }
    const logFrom = statSync(LOG).size;
    const fake = await h.fake();
    fake.always(healthyStream(WORDS, { delayMs: 10 }));
    const proxy = await h.proxy({
      tiers: [
        { name: 'llama', url: `http://127.0.0.1:${PORT}/v1`, model: 'tiny', timeouts: { ttft_ms: 60_000, cold_ttft_ms: 60_000 } },
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
    await waitFor(() => readFileSync(LOG, 'utf8').slice(logFrom).includes('cancel task'), 10_000, 'llama-server to cancel the task');
  }, 60_000);
});
