import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/schema.js';
import { AttemptError } from '../../../src/proxy/attempt-error.js';
import { type AttemptSite, type Flight, openTier, type Opening, startStream } from '../../../src/proxy/attempt-start.js';
import type { EmbeddedState } from '../../../src/state/embedded-state.js';
import { roleThenSilence } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { chatRoute, type Loop, loadSpec, loopFor, realState } from '../../helpers/loop-kit.js';
import type { TierSpec } from '../../helpers/proxy.js';

/**
 * Where every attempt starts (src/proxy/attempt-start.ts), through openTier and startStream:
 * the fit check, llm-route's own limits and budgets (the real local limiter and SQLite ledger),
 * the half-open trial, and the TTFT budget a stream gets — cold or warm, cut by the deadline.
 */

const h = useHarness();

function siteOf(loop: Loop, deadlineMs = 120_000, allDown = false): AttemptSite {
  return { req: loop.req, app: loop.app, deadlineAt: loop.req.arrivedAt + deadlineMs, allDown };
}

async function open(loop: Loop, tierName = 'a', site = siteOf(loop)): Promise<Opening> {
  const tier = loop.req.route.tiers.find((t) => t.name === tierName);
  if (!tier) throw new Error(`no tier ${tierName}`);
  return openTier(site, tier);
}

const skipped = (loop: Loop) => loop.req.log.records.map((r) => `${r.tier}:${r.outcome}`);
const slots = (state: EmbeddedState, name = 'a') => state.limitsView(`p_${name}`, { queue_ms: 0, concurrency: 1 }).in_flight;

function oneTier(tier: Partial<TierSpec> = {}, top?: Record<string, unknown>): Config {
  return loadSpec({ tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1', retry: { attempts: 1 }, ...tier }], top });
}

describe('openTier: can the tier carry it, does it fit', () => {
  it('a request that fits its window opens the tier: the call to send, nothing recorded', async () => {
    const loop = loopFor(h, oneTier({ extra: { context: 100_000 } }));
    expect(await open(loop)).toMatchObject({ open: true, call: { request: { path: '/v1/chat/completions' } } });
    expect(skipped(loop)).toEqual([]);
  });

  it('a request too long for its window: skipped as too_long, with the numbers, nothing sent', async () => {
    const loop = loopFor(h, oneTier({ extra: { context: 64 } }), { messages: [{ role: 'user', content: 'word '.repeat(400) }] });
    const opening = await open(loop);
    expect(opening).toMatchObject({ open: false, why: 'too_long', numbers: { limit: 64, prompt: expect.any(Number) } });
    expect(skipped(loop)).toEqual(['a:too_long']);
  });

  it('a request the tier cannot carry (n > 1 to Anthropic): unsupported, with its reason', async () => {
    const loop = loopFor(h, oneTier({ type: 'anthropic' }), { n: 2 });
    expect(await open(loop)).toMatchObject({ open: false, why: 'unsupported', message: expect.any(String) });
    expect(skipped(loop)).toEqual(['a:unsupported']);
  });

  it('a tier sent the client’s own key, and the request has none: no_client_credential', async () => {
    const loop = loopFor(h, oneTier({ api_key: 'from_client' }));
    expect(await open(loop)).toMatchObject({ open: false, why: 'no_client_credential' });
    expect(skipped(loop)).toEqual(['a:no_client_credential']);
  });
});

describe("openTier: llm-route's own limits and budgets", () => {
  it('a provider at its concurrency: limited (rate_limited) until the request holding it leaves the tier', async () => {
    const config = oneTier({ provider: { limits: { concurrency: 1, queue_ms: 0 } } });
    const state = realState(config, h.defer);
    const first = loopFor(h, config, {}, { state });
    expect(await open(first)).toMatchObject({ open: true });
    expect(slots(state)).toBe(1);
    const second = loopFor(h, config, {}, { state });
    expect(await open(second)).toMatchObject({ open: false, why: 'limited', limited: { outcome: 'rate_limited', retryAfterMs: expect.any(Number) } });
    expect(skipped(second)).toEqual(['a:rate_limited']);
    first.req.log.left(chatRoute(config).tiers[0]);
    expect(slots(state)).toBe(0);
    expect(await open(loopFor(h, config, {}, { state }))).toMatchObject({ open: true });
  });

  it('a budget that cannot hold the worst case: limited (budget), and nothing left reserved', async () => {
    const config = oneTier({}, { usage: {}, budgets: [{ scope: 'provider:p_a', per: 'day', tokens: 50 }] });
    const state = realState(config, h.defer);
    const loop = loopFor(h, config, { max_tokens: 100 }, { state });
    expect(await open(loop)).toMatchObject({ open: false, why: 'limited', limited: { outcome: 'budget' } });
    expect(loop.req.log.records[0]).toMatchObject({ outcome: 'budget', message: expect.stringMatching(/^budget provider:p_a per day exhausted/) });
    expect(await state.budgets.remaining('provider:p_a')).toMatchObject([{ reserved: 0, spent: 0 }]);
  });

  it('the client leaves while a limit is waited for: aborted', async () => {
    const config = oneTier({ provider: { limits: { concurrency: 1, queue_ms: 10_000 } } });
    const state = realState(config, h.defer);
    expect(await open(loopFor(h, config, {}, { state }))).toMatchObject({ open: true });
    const waiting = loopFor(h, config, {}, { state });
    const opening = open(waiting);
    waiting.arrival.client.abort();
    expect(await opening).toEqual({ open: false, why: 'aborted' });
  });
});

describe('openTier: the half-open trial', () => {
  it('another request holds the trial: trial_taken, and the hold just taken is given back', async () => {
    const config = oneTier({ provider: { limits: { concurrency: 1, queue_ms: 0 } } });
    const state = realState(config, h.defer);
    const loop = loopFor(h, config, {}, { state });
    loop.gate.trialTaken.add('a');
    expect(await open(loop)).toEqual({ open: false, why: 'trial_taken' });
    expect(loop.gate.claims).toEqual(['a']);
    expect(slots(state)).toBe(0);
  });

  it('every planned tier down: no trial is claimed, the tier opens', async () => {
    const loop = loopFor(h, oneTier());
    loop.gate.trialTaken.add('a');
    expect(await open(loop, 'a', siteOf(loop, 120_000, true))).toMatchObject({ open: true });
    expect(loop.gate.claims).toEqual([]);
  });
});

describe('startStream: the TTFT budget', () => {
  async function firstTokenError(cold: boolean, deadlineMs: number): Promise<{ error: AttemptError; requests: number }> {
    const fake = await h.fake();
    fake.always(roleThenSilence('a'));
    const config = oneTier({ url: fake.url, timeouts: { ttft_ms: 60, cold_ttft_ms: 200 } });
    const loop = loopFor(h, config, { stream: true });
    if (cold) loop.gate.cold.add('a');
    const tier = chatRoute(config).tiers[0];
    const opening = await openTier(siteOf(loop), tier);
    if (!opening.open) throw new Error('not opened');
    const flight = startStream(siteOf(loop, deadlineMs), 0, tier, opening.call, 1);
    if (flight instanceof AttemptError) return { error: flight, requests: fake.requests.length };
    const result = await (flight as Flight).attempt.committed;
    if (result.committed) throw new Error('committed');
    return { error: result.error, requests: fake.requests.length };
  }

  it('a warm tier gets ttft_ms', async () => {
    expect((await firstTokenError(false, 120_000)).error).toMatchObject({ reason: 'ttft_timeout', message: 'no first token within 60 ms' });
  });

  it('a cold tier (its model may have to load) gets cold_ttft_ms', async () => {
    expect((await firstTokenError(true, 120_000)).error).toMatchObject({ reason: 'ttft_timeout', message: 'no first token within 200 ms' });
  });

  it("the route's deadline cuts either short: the budget ran out, not the tier (reason deadline)", async () => {
    const { error } = await firstTokenError(true, 40);
    expect(error).toMatchObject({ reason: 'deadline', failover: expect.any(Boolean) });
  });

  it('a deadline already passed: nothing is sent', async () => {
    const { error, requests } = await firstTokenError(false, -1);
    expect(error).toMatchObject({ reason: 'deadline' });
    expect(requests).toBe(0);
  });
});
