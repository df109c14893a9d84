import { describe, expect, it } from 'vitest';
import type { Config, Tier } from '../../../src/config/schema.js';
import { RequestHolds } from '../../../src/proxy/request-holds.js';
import type { EmbeddedState } from '../../../src/state/embedded-state.js';
import { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { useHarness, waitFor } from '../../helpers/harness.js';
import { chatRoute, loadSpec, parsedRequest, realState } from '../../helpers/loop-kit.js';

/**
 * A request's holds at its tiers (src/proxy/request-holds.ts) on the real limits and budgets:
 * the local limiter, and the budgets ledger on SQLite. Reserve, charge, and the one way a hold
 * ends — settled to what its tier was charged, else given back.
 */

const h = useHarness();

const LIMITS = { concurrency: 2, tpm: 1_000_000, queue_ms: 0 };

/** Two tiers, a and b, each on a provider with limits and a token budget; one request asking max_tokens 100. */
function setUp(budgets: Array<Record<string, unknown>> = [{ scope: 'route:chat', per: 'day', tokens: 100_000 }]) {
  const config: Config = loadSpec({
    tiers: ['a', 'b'].map((name) => ({ name, url: `http://127.0.0.1:9/${name}/v1`, provider: { limits: LIMITS } })),
    top: { usage: {}, budgets },
  });
  const state = realState(config, h.defer);
  const [a, b] = chatRoute(config).tiers;
  const request = parsedRequest({ max_tokens: 100 });
  const holds = RequestHolds.for(chatRoute(config), config, state, request);
  if (!holds) throw new Error('no holds');
  return { config, state, a, b, holds, request };
}

const slots = (state: EmbeddedState, tier: Tier) => state.limitsView(tier.provider.name, LIMITS).in_flight;

async function budget(state: EmbeddedState, scope = 'route:chat') {
  const [status] = await state.budgets.remaining(scope);
  return status;
}

/** What the budget says once nothing is held on it. */
const settled = (state: EmbeddedState, scope = 'route:chat') =>
  waitFor(async () => ((await budget(state, scope)).reserved === 0 ? budget(state, scope) : null));

describe('RequestHolds', () => {
  it('is made only for a route where some tier has limits or a budget', () => {
    const config = loadSpec({ tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1' }] });
    expect(RequestHolds.for(chatRoute(config), config, realState(config, h.defer), parsedRequest({}))).toBeNull();
  });

  it('reserve holds the worst case on the budget and a slot at the provider; leaving the tier uncharged gives both back', async () => {
    const { state, a, holds } = setUp();
    expect(await holds.reserve(a, new ClientLifetime())).toEqual({ ok: true });
    expect(slots(state, a)).toBe(1);
    const held = await budget(state);
    // The prompt's estimate and the 100 tokens the answer may have.
    expect(held.reserved).toBeGreaterThan(100);
    holds.leave(a);
    expect(slots(state, a)).toBe(0);
    expect(await settled(state)).toMatchObject({ reserved: 0, spent: 0 });
  });

  it('a charged tier settles to what it used, not to its worst case', async () => {
    const { state, a, holds } = setUp();
    await holds.reserve(a, new ClientLifetime());
    holds.charge(a, { prompt_tokens: 12, completion_tokens: 30 }, '');
    holds.leave(a);
    expect(await settled(state)).toMatchObject({ spent: 42 });
  });

  it('charges add up (a resume on the tier that broke): the hold settles to the sum, once', async () => {
    const { state, a, holds } = setUp();
    await holds.reserve(a, new ClientLifetime());
    holds.charge(a, { prompt_tokens: 10, completion_tokens: 5 }, '');
    holds.charge(a, { prompt_tokens: 20, completion_tokens: 7 }, '');
    holds.leave(a);
    holds.leave(a);
    holds.end();
    expect(await settled(state)).toMatchObject({ spent: 42 });
  });

  it('without usage, what the tier wrote is estimated with the prompt', async () => {
    const { state, a, holds } = setUp();
    await holds.reserve(a, new ClientLifetime());
    holds.charge(a, undefined, 'x'.repeat(300));
    holds.leave(a);
    const { spent } = await settled(state);
    expect(spent).toBeGreaterThanOrEqual(100);
    expect(spent).toBeLessThan(200);
  });

  it("the request's end ends every hold still open: the charged one settled, the other given back", async () => {
    const { state, a, b, holds } = setUp([
      { scope: 'provider:p_a', per: 'day', tokens: 100_000 },
      { scope: 'provider:p_b', per: 'day', tokens: 100_000 },
    ]);
    await holds.reserve(a, new ClientLifetime());
    await holds.reserve(b, new ClientLifetime());
    holds.charge(b, { prompt_tokens: 3, completion_tokens: 4 }, '');
    expect([slots(state, a), slots(state, b)]).toEqual([1, 1]);
    holds.end();
    expect([slots(state, a), slots(state, b)]).toEqual([0, 0]);
    expect(await settled(state, 'provider:p_a')).toMatchObject({ spent: 0 });
    expect(await settled(state, 'provider:p_b')).toMatchObject({ spent: 7 });
  });

  it('refused by the budget: outcome budget with when it should say yes; nothing is left held', async () => {
    const { state, a, holds } = setUp([{ scope: 'route:chat', per: 'day', tokens: 50 }]);
    const refused = await holds.reserve(a, new ClientLifetime());
    expect(refused).toMatchObject({
      ok: false,
      outcome: 'budget',
      retryAfterMs: expect.any(Number),
      message: expect.stringMatching(/^budget route:chat per day exhausted/),
    });
    expect(slots(state, a)).toBe(0);
    expect(await budget(state)).toMatchObject({ reserved: 0 });
  });

  it('refused by the concurrency limit: rate_limited, and the budget reservation made beside it is given back', async () => {
    const { state, a, holds, config, request } = setUp();
    const others = [0, 1].map(() => RequestHolds.for(chatRoute(config), config, state, request) as RequestHolds);
    for (const other of others) expect(await other.reserve(a, new ClientLifetime())).toEqual({ ok: true });
    const before = (await budget(state)).reserved;
    expect(await holds.reserve(a, new ClientLifetime())).toMatchObject({
      ok: false,
      outcome: 'rate_limited',
      message: 'provider p_a at its concurrency limit',
    });
    await waitFor(async () => (await budget(state)).reserved === before, 3000, 'the refused reservation to be given back');
    for (const other of others) other.end();
    expect(slots(state, a)).toBe(0);
  });

  it('a retry asks the rpm bucket only (it holds one second of 120 a minute: two): true while it has room', async () => {
    const config = loadSpec({ tiers: [{ name: 'a', url: 'http://127.0.0.1:9/v1', provider: { limits: { rpm: 120, queue_ms: 0 } } }] });
    const state = realState(config, h.defer);
    const holds = RequestHolds.for(chatRoute(config), config, state, parsedRequest({})) as RequestHolds;
    const [a] = chatRoute(config).tiers;
    expect(await holds.reserve(a, new ClientLifetime())).toEqual({ ok: true });
    expect(await holds.reserveRetry(a, new ClientLifetime())).toBe(true);
    expect(await holds.reserveRetry(a, new ClientLifetime())).toBe(false);
    holds.end();
  });
});
