import { describe, expect, it } from 'vitest';
import { routeRequest } from '../../../src/proxy/route-request.js';
import type { RoutingOutcome } from '../../../src/proxy/routing-outcome.js';
import { completion, healthyStream, roleThenSilence, type Script } from '../../helpers/fake-upstream.js';
import type { FakeUpstream } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { loadSpec, loopFor, realState } from '../../helpers/loop-kit.js';
import type { TierSpec } from '../../helpers/proxy.js';

/**
 * The routing loop (src/proxy/route-request.ts) driven through its interface: a RoutingRequest
 * and the app's view (a gate the test sets), real attempts on the project's pools against fake
 * upstreams on port 0, and the outcome it returns. No llm-route server: the exchange's side is
 * a recording Arrival (test/helpers/loop-kit.ts).
 */

const h = useHarness();

const serverError: Script = (ctx) => ctx.json(500, { error: { message: 'boom' } });
const WORDS = ['Hello', ' there'];

/** Fake upstreams, one per name, and a tier file with one tier on each (no retries unless `tier` says). */
async function tiers(
  names: string[],
  tier: (name: string) => Partial<TierSpec> = () => ({}),
): Promise<{ fakes: Record<string, FakeUpstream>; specs: TierSpec[] }> {
  const fakes: Record<string, FakeUpstream> = {};
  const specs: TierSpec[] = [];
  for (const name of names) {
    fakes[name] = await h.fake();
    specs.push({ name, url: fakes[name].url, retry: { attempts: 1 }, ...tier(name) });
  }
  return { fakes, specs };
}

/** Who tried what, as the outcome's attempts say. */
const tried = (outcome: RoutingOutcome) => outcome.attempts.map((a) => `${a.tier}#${a.attempt}:${a.outcome}`);

describe('plan order', () => {
  it('the first tier answers: the later ones are never asked, and the stream commits once', async () => {
    const { fakes, specs } = await tiers(['a', 'b', 'c']);
    fakes.a.always(healthyStream(WORDS));
    const loop = loopFor(h, loadSpec({ tiers: specs }), { stream: true });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'stream', tier: { name: 'a' } });
    expect(tried(outcome)).toEqual(['a#1:ok']);
    expect(loop.arrival.commits).toEqual([{ tier: 'a', attempts: 1 }]);
    expect(fakes.b.requests).toHaveLength(0);
    expect(fakes.c.requests).toHaveLength(0);
  });

  it('a tier the health gate holds back (its circuit open) is left out of the plan; weight 0 never draws', async () => {
    const { fakes, specs } = await tiers(['a', 'b', 'c'], (name) => (name === 'b' ? { weight: 0 } : {}));
    fakes.c.always((ctx) => ctx.json(200, completion('from c')));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    loop.gate.down.add('a');
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'unary', tier: { name: 'c' } });
    expect(tried(outcome)).toEqual(['c#1:ok']);
    expect(fakes.a.requests).toHaveLength(0);
    expect(fakes.b.requests).toHaveLength(0);
  });

  it('every tier down: they are tried all the same, in order, without half-open trial claims', async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always(serverError);
    fakes.b.always((ctx) => ctx.json(200, completion('b')));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    loop.gate.down.add('a').add('b');
    const outcome = await routeRequest(loop.req, loop.app);
    expect(tried(outcome)).toEqual(['a#1:server_error', 'b#1:ok']);
    expect(loop.gate.claims).toEqual([]);
  });
});

describe('retries and failover', () => {
  it('a retryable failure is tried again on the same tier, after its backoff', async () => {
    const { fakes, specs } = await tiers(['a'], () => ({ retry: { attempts: 3, base_ms: 1, max_ms: 5 } }));
    fakes.a.next(serverError, serverError, healthyStream(WORDS));
    const loop = loopFor(h, loadSpec({ tiers: specs }), { stream: true });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(tried(outcome)).toEqual(['a#1:server_error', 'a#2:server_error', 'a#3:ok']);
    // The client's attempt count at commit: this try and the two before it.
    expect(loop.arrival.commits).toEqual([{ tier: 'a', attempts: 3 }]);
  });

  it('a tier out of tries fails over: a failover event, the idempotent record told, the next tier answers', async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always(serverError);
    fakes.b.always((ctx) => ctx.json(200, completion('b')));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    let fellBack = 0;
    loop.req.fallbackWatch = { fallback: () => fellBack++ };
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'unary', tier: { name: 'b' } });
    expect(tried(outcome)).toEqual(['a#1:server_error', 'b#1:ok']);
    expect(loop.events.filter((e) => e.type === 'failover')).toEqual([expect.objectContaining({ fromTier: 'a', reason: 'server_error' })]);
    expect(fellBack).toBe(1);
  });

  it("the payload's fault (a 400) is not failed over: the upstream's own answer is the outcome", async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always((ctx) => ctx.json(400, { error: { message: 'bad field', type: 'invalid_request_error' } }));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'rejected', tier: { name: 'a' }, answer: { status: 400 } });
    expect(fakes.b.requests).toHaveLength(0);
  });
});

describe('the deadline', () => {
  it("a stream gets no more than the route's deadline: the attempt is cut at it and no later tier starts", async () => {
    const { fakes, specs } = await tiers(['a', 'b'], () => ({ timeouts: { ttft_ms: 20_000 } }));
    fakes.a.always(roleThenSilence('a'));
    const loop = loopFor(h, loadSpec({ tiers: specs, deadline_ms: 150 }), { stream: true });
    const started = performance.now();
    const outcome = await routeRequest(loop.req, loop.app);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(outcome).toMatchObject({ kind: 'exhausted', timedOut: true });
    expect(tried(outcome)).toEqual(['a#1:deadline']);
    expect(fakes.b.requests).toHaveLength(0);
  });
});

describe('hedging', () => {
  it('a first tier with no first content after hedge_ms is raced by the next; the winner commits, the loser is recorded', async () => {
    const { fakes, specs } = await tiers(['a', 'b'], (name) => (name === 'a' ? { timeouts: { ttft_ms: 20_000 } } : {}));
    fakes.a.always(roleThenSilence('a'));
    fakes.b.always(healthyStream(WORDS));
    const loop = loopFor(h, loadSpec({ tiers: specs, routeKeys: { hedge_ms: 30 } }), { stream: true });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'stream', tier: { name: 'b' }, hedge: { hedged: { winner: 'b', loser: 'a', result: 'second_won' } } });
    expect(tried(outcome)).toEqual(['a#1:hedge_lost', 'b#1:ok']);
    expect(loop.arrival.commits).toEqual([{ tier: 'b', attempts: 2 }]);
  });

  it('the first fails while its hedge runs: the hedge is handed on as the next tier’s first try, and commits', async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always(async (ctx) => {
      await ctx.wait(120);
      serverError(ctx);
    });
    fakes.b.always(async (ctx) => {
      await ctx.wait(300);
      return healthyStream(WORDS)(ctx);
    });
    const loop = loopFor(h, loadSpec({ tiers: specs, routeKeys: { hedge_ms: 30 } }), { stream: true });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'stream', tier: { name: 'b' } });
    expect((outcome as Extract<RoutingOutcome, { kind: 'stream' }>).hedge).toBeUndefined();
    expect(tried(outcome)).toEqual(['a#1:server_error', 'b#1:ok']);
    expect(fakes.b.requests).toHaveLength(1);
  });
});

describe('no answer', () => {
  it('every tier failed: exhausted, not timed out, with the plan’s size', async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always(serverError);
    fakes.b.always(serverError);
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    expect(await routeRequest(loop.req, loop.app)).toMatchObject({ kind: 'exhausted', timedOut: false, planned: 2, limited: null });
  });

  it('no tier drawn: exhausted with an empty plan', async () => {
    const { specs } = await tiers(['a'], () => ({ weight: 0 }));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    expect(await routeRequest(loop.req, loop.app)).toMatchObject({ kind: 'exhausted', planned: 0, attempts: [] });
  });

  it('no tier can carry it: unsupported, each tier’s reason', async () => {
    const { fakes, specs } = await tiers(['a'], () => ({ type: 'anthropic' }));
    const loop = loopFor(h, loadSpec({ tiers: specs }), { n: 2 });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'unsupported', reasons: [expect.stringMatching(/^a: /)] });
    expect(fakes.a.requests).toHaveLength(0);
  });

  it('too long for every tier: too_long, nothing sent', async () => {
    const { fakes, specs } = await tiers(['a'], () => ({ extra: { context: 64 } }));
    const loop = loopFor(h, loadSpec({ tiers: specs }), { messages: [{ role: 'user', content: 'word '.repeat(400) }] });
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'too_long' });
    expect(tried(outcome)).toEqual(['a#1:too_long']);
    expect(fakes.a.requests).toHaveLength(0);
  });

  it('a tier that takes the client’s own key, and none came: client_credential', async () => {
    const { fakes, specs } = await tiers(['a'], () => ({ api_key: 'from_client' }));
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    const outcome = await routeRequest(loop.req, loop.app);
    expect(outcome).toMatchObject({ kind: 'client_credential' });
    expect(tried(outcome)).toEqual(['a#1:no_client_credential']);
    expect(fakes.a.requests).toHaveLength(0);
  });

  it("llm-route's own limit said no: exhausted with the soonest retry", async () => {
    const { fakes, specs } = await tiers(['a'], () => ({ provider: { limits: { rpm: 1, queue_ms: 0 } } }));
    fakes.a.always((ctx) => ctx.json(200, completion('a')));
    const config = loadSpec({ tiers: specs });
    const state = realState(config, h.defer);
    const first = loopFor(h, config, {}, { state });
    expect(await routeRequest(first.req, first.app)).toMatchObject({ kind: 'unary' });
    const second = loopFor(h, config, {}, { state });
    const outcome = await routeRequest(second.req, second.app);
    expect(outcome).toMatchObject({ kind: 'exhausted', limited: { outcome: 'rate_limited', retryAfterMs: expect.any(Number) } });
    expect(tried(outcome)).toEqual(['a#1:rate_limited']);
    expect(fakes.a.requests).toHaveLength(1);
  });

  it('the client left while a tier was at work: aborted, that tier named, its attempt on record', async () => {
    const { fakes, specs } = await tiers(['a', 'b']);
    fakes.a.always(async (ctx) => {
      await ctx.closed;
    });
    const loop = loopFor(h, loadSpec({ tiers: specs }));
    const routing = routeRequest(loop.req, loop.app);
    await new Promise((resolve) => setTimeout(resolve, 50));
    loop.arrival.client.abort();
    const outcome = await routing;
    expect(outcome).toMatchObject({ kind: 'aborted', tier: { name: 'a' } });
    expect(tried(outcome)).toEqual(['a#1:client_abort']);
    expect(fakes.b.requests).toHaveLength(0);
  });
});
