import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_IN_FLIGHT, type SendRequest, startTraffic } from '../../../src/demo/traffic.js';

/** Requests that are answered only when the test says so (or abort): answers in flight as long as it likes. */
function heldRequests() {
  const sent: Array<{ prompt: string; answer: () => void; aborted: boolean }> = [];
  const send: SendRequest = (prompt, signal) =>
    new Promise<void>((resolve, reject) => {
      const entry = { prompt, answer: resolve, aborted: false };
      sent.push(entry);
      signal.addEventListener('abort', () => {
        entry.aborted = true;
        reject(new Error('aborted'));
      });
    });
  return { sent, send };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the demo's traffic", () => {
  it('sends one request every 0.7 s whatever the answers in flight do, the prompts in turn', async () => {
    const { sent, send } = heldRequests();
    const stop = startTraffic('http://unused', 700, ['a', 'b', 'c'], send);
    expect(sent).toHaveLength(1); // the first at once
    await vi.advanceTimersByTimeAsync(7_000);
    // None was answered, and still: one at 0, then one each 0.7 s.
    expect(sent).toHaveLength(11);
    expect(sent.slice(0, 4).map((r) => r.prompt)).toEqual(['a', 'b', 'c', 'a']);
    for (const r of sent.slice(0, 5)) r.answer();
    await vi.advanceTimersByTimeAsync(700);
    expect(sent).toHaveLength(12);
    await stop();
  });

  it(`holds at most ${MAX_IN_FLIGHT} in flight, and goes on once answers come`, async () => {
    const { sent, send } = heldRequests();
    const stop = startTraffic('http://unused', 100, ['a'], send);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent).toHaveLength(MAX_IN_FLIGHT);
    sent[0].answer();
    sent[1].answer();
    await vi.advanceTimersByTimeAsync(250);
    expect(sent).toHaveLength(MAX_IN_FLIGHT + 2);
    await stop();
  });

  it('stop aborts every request in flight, resolves once they are done, and sends no more', async () => {
    const { sent, send } = heldRequests();
    const stop = startTraffic('http://unused', 700, ['a'], send);
    await vi.advanceTimersByTimeAsync(2_100);
    expect(sent).toHaveLength(4);
    await stop();
    expect(sent.every((r) => r.aborted)).toBe(true);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent).toHaveLength(4);
  });
});
