import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Budget } from '../../../src/config/schema.js';
import { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { LocalIdempotency } from '../../../src/state/local-idempotency.js';
import { LocalLimiter } from '../../../src/state/local-limiter.js';
import { RedisIdempotency } from '../../../src/state/redis-idempotency.js';
import { RedisLedger } from '../../../src/usage/budgets/redis-ledger.js';
import { RedisLimiter } from '../../../src/state/redis-limiter.js';
import { RedisLink } from '../../../src/redis/redis-link.js';
import type { IdempotencyRecordKey, LimitLease, StoredAnswer } from '../../../src/state/types.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { budgetWindow } from '../../../src/usage/budgets/windows.js';
import { completion } from '../../helpers/fake-upstream.js';
import { sleep, useHarness, waitFor } from '../../helpers/harness.js';
import { chat, configYaml } from '../../helpers/proxy.js';
import { RedisRelay } from '../../helpers/redis-relay.js';
import { useRedis } from '../../helpers/state-kit.js';
import { SKIP_REDIS } from '../../helpers/redis-available.js';

/**
 * The Redis backend's parts across network trouble that keeps Redis's data (a partition, or
 * replies that come too late), through a relay in front of the real redis-server: what a
 * request took on Redis is given back there, and an answer is not run twice.
 */
const h = useHarness();
const redis = useRedis();

interface Parts {
  relay: RedisRelay;
  prefix: string;
  /** A connection of the test's own, straight to Redis (never through the relay). */
  direct: Redis;
  /** A link through the relay, or straight to Redis (`direct`: an instance that never loses it). */
  link(direct?: boolean): Promise<RedisLink>;
}

async function parts(): Promise<Parts> {
  const relay = await RedisRelay.start(redis().port);
  h.defer(() => relay.stop());
  const direct = new Redis(redis().url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await direct.connect();
  h.defer(() => direct.quit());
  return {
    relay,
    prefix: `o-${randomUUID().slice(0, 8)}:`,
    direct,
    async link(direct = false) {
      const link = new RedisLink(direct ? redis().url : relay.url, new TelemetryBus());
      h.defer(() => link.close());
      await waitFor(() => link.up, 5000, 'the link to reach Redis');
      return link;
    },
  };
}

async function partition(p: Parts, link: RedisLink): Promise<void> {
  p.relay.cut();
  await waitFor(() => !link.up, 3000, 'the link to see the partition');
}

async function rejoin(p: Parts, link: RedisLink): Promise<void> {
  p.relay.heal();
  await waitFor(() => link.up, 10_000, 'the link to rejoin');
}

const limits = { concurrency: 20, tpm: 6_000_000, queue_ms: 0 };
const ask = { provider: 'paid', limits, tokens: 100, slot: true, slotMs: 600_000, maxWaitMs: 0 };

describe.skipIf(SKIP_REDIS)('limits across an outage', () => {
  it('slots of requests that ended during a partition are given back on rejoin: no 429 for the next 20', async () => {
    const p = await parts();
    const link = await p.link();
    const limiter = new RedisLimiter(link, p.prefix, new LocalLimiter());
    const client = new ClientLifetime();
    const slots = `${p.prefix}limits:paid:slots`;
    const leases: LimitLease[] = [];
    for (let i = 0; i < 20; i++) {
      const grant = await limiter.acquire(ask, client);
      expect(grant).toMatchObject({ ok: true, lease: { where: 'shared' } });
      if (grant.ok) leases.push(grant.lease);
    }
    expect(await p.direct.zcard(slots)).toBe(20);
    await partition(p, link);
    await Promise.all(leases.map((lease) => limiter.settle(lease, 10)));
    await rejoin(p, link);
    await waitFor(async () => (await p.direct.zcard(slots)) === 0, 5000, 'the slots to be given back');
    const again = await Promise.all(Array.from({ length: 20 }, () => limiter.acquire(ask, client)));
    expect(again.filter((g) => g.ok && g.lease.where === 'shared')).toHaveLength(20);
  });

  it('a slot held past its lifetime (a long stream) is renewed: another instance cannot take it; a holder that died loses it', async () => {
    const p = await parts();
    // Three instances on one Redis; a lifetime of 800 ms stands in for the tier's (minutes).
    const [first, second, third] = await Promise.all([p.link(true), p.link(true), p.link(true)]);
    const [a, b, c] = [first, second, third].map((link) => new RedisLimiter(link, p.prefix, new LocalLimiter()));
    const client = new ClientLifetime();
    const one = { provider: 'paid', limits: { concurrency: 1, queue_ms: 0 }, tokens: 0, slot: true, slotMs: 800, maxWaitMs: 0 };
    const held = await a.acquire(one, client);
    expect(held).toMatchObject({ ok: true, lease: { where: 'shared' } });
    await sleep(2_000); // two and a half lifetimes
    expect(await b.acquire(one, client)).toMatchObject({ ok: false, limit: 'concurrency' });
    expect(a.inFlight('paid')).toBe(1);
    // Given back: the next takes it at once, and the renewals of the first stopped.
    if (held.ok) await a.settle(held.lease, 0);
    expect(a.inFlight('paid')).toBe(0);
    const taken = await b.acquire(one, client);
    expect(taken).toMatchObject({ ok: true, lease: { where: 'shared' } });
    // Its holder dies (no give-back, no renewals): the slot lapses within its lifetime, no sooner.
    await second.close();
    const after = await c.acquire({ ...one, maxWaitMs: 10_000 }, client);
    expect(after).toMatchObject({ ok: true, lease: { where: 'shared' } });
    expect(after.waitedMs).toBeGreaterThanOrEqual(300);
    if (taken.ok) await b.settle(taken.lease, 0);
    if (after.ok) await c.settle(after.lease, 0);
    expect(await p.direct.zcard(`${p.prefix}limits:paid:slots`)).toBe(0);
  });

  it("a slot with a short lifetime does not shorten the slot set's own expiry (which would drop the longer slots in it)", async () => {
    const p = await parts();
    const limiter = new RedisLimiter(await p.link(true), p.prefix, new LocalLimiter());
    const client = new ClientLifetime();
    const slots = `${p.prefix}limits:paid:slots`;
    const long = await limiter.acquire({ ...ask, slotMs: 600_000 }, client);
    const short = await limiter.acquire({ ...ask, slotMs: 1_000 }, client);
    expect(await p.direct.pttl(slots)).toBeGreaterThan(600_000);
    for (const grant of [long, short]) if (grant.ok) await limiter.settle(grant.lease, 0);
  });

  it('a reservation whose reply came too late (it ran on Redis) is given back there', async () => {
    const p = await parts();
    const link = await p.link();
    const limiter = new RedisLimiter(link, p.prefix, new LocalLimiter());
    const slots = `${p.prefix}limits:paid:slots`;
    p.relay.stall();
    const grant = await limiter.acquire(ask, new ClientLifetime());
    // The caller saw a timeout and took room locally…
    expect(grant).toMatchObject({ ok: true, lease: { where: 'local' } });
    p.relay.heal();
    // …while the script ran on Redis: its slot must not stay there.
    await waitFor(async () => (await p.direct.zcard(slots)) === 0, 5000, 'the slot taken on Redis to be given back');
    if (grant.ok) await limiter.settle(grant.lease, 0);
  });
});

const budgets: Budget[] = [{ scope: 'route:chat', per: 'month', unit: 'tokens', limit: 1_000_000 }];

async function windowRow(p: Parts): Promise<{ spent: number; reserved: number }> {
  const start = budgetWindow('month', Date.now()).start;
  const [spent, reserved] = await p.direct.hmget(`${p.prefix}budget:tokens:month:${start}:route:chat`, 'spent', 'reserved');
  return { spent: Number(spent ?? 0), reserved: Number(reserved ?? 0) };
}

const amount = (tokens: number): { tokens: number; usd: number } => ({ tokens, usd: 0 });

describe.skipIf(SKIP_REDIS)('two proxies, a concurrency limit and a partition', () => {
  it('requests that finish while Redis is unreachable give their slots back on rejoin: the next ones are not refused', async () => {
    const p = await parts();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const fake = await h.fake();
    fake.always(async (ctx) => {
      await gate;
      ctx.json(200, completion('x'));
    });
    const yaml = configYaml({
      tiers: [{ name: 'cloud', url: fake.url, provider: { limits: { concurrency: 4, queue_ms: 0 } } }],
      top: { state: { redis: p.relay.url, prefix: p.prefix } },
    });
    const proxies = [await h.proxy(yaml), await h.proxy(yaml)];
    await waitFor(() => proxies.every((x) => x.server.state.up), 5000, 'both instances on Redis');
    const first = Array.from({ length: 4 }, (_, i) => chat(proxies[i % 2], {}));
    await waitFor(() => fake.requests.length === 4, 5000, 'four requests at the upstream');
    expect(await p.direct.zcard(`${p.prefix}limits:p_cloud:slots`)).toBe(4);
    p.relay.cut();
    await waitFor(() => proxies.every((x) => !x.server.state.up), 3000, 'both instances apart');
    open();
    for (const res of await Promise.all(first)) expect(res.status).toBe(200);
    p.relay.heal();
    await waitFor(() => proxies.every((x) => x.server.state.up), 10_000, 'both instances back');
    await waitFor(async () => (await p.direct.zcard(`${p.prefix}limits:p_cloud:slots`)) === 0, 5000, 'the slots given back');
    const next = await Promise.all(Array.from({ length: 4 }, (_, i) => chat(proxies[i % 2], {})));
    expect(next.map((res) => res.status)).toEqual([200, 200, 200, 200]);
  });
});

describe.skipIf(SKIP_REDIS)('budgets across an outage', () => {
  it('a hold that ends during a partition reaches Redis on rejoin, its spend counted exactly once beside spend made locally', async () => {
    const p = await parts();
    const link = await p.link();
    const ledger = new RedisLedger(link, p.prefix, budgets, () => undefined);
    h.defer(() => ledger.close());
    link.onRejoin(() => ledger.rejoin());
    const shared = await ledger.reserve(['route:chat'], amount(100));
    expect(shared).toMatchObject({ ok: true });
    expect(await windowRow(p)).toEqual({ spent: 0, reserved: 100 });
    await partition(p, link);
    const local = await ledger.reserve(['route:chat'], amount(50));
    expect(local).toMatchObject({ ok: true, id: expect.stringMatching(/^l:/) });
    if (shared.ok) await ledger.settle(shared.id, amount(30));
    if (local.ok) await ledger.settle(local.id, amount(20));
    await rejoin(p, link);
    await waitFor(async () => JSON.stringify(await windowRow(p)) === JSON.stringify({ spent: 50, reserved: 0 }), 5000, 'spent 50, nothing reserved');
    // Another rejoin replays nothing twice.
    await partition(p, link);
    await rejoin(p, link);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await windowRow(p)).toEqual({ spent: 50, reserved: 0 });
  });

  it('spend settled locally whose charge reply came too late is counted once, whatever rejoins follow', async () => {
    const p = await parts();
    const link = await p.link();
    const ledger = new RedisLedger(link, p.prefix, budgets, () => undefined);
    h.defer(() => ledger.close());
    link.onRejoin(() => ledger.rejoin());
    await partition(p, link);
    const held = await ledger.reserve(['route:chat'], amount(100));
    expect(held).toMatchObject({ ok: true, id: expect.stringMatching(/^l:/) });
    await rejoin(p, link);
    p.relay.stall();
    // The charge reaches Redis; its reply does not reach the ledger in time.
    if (held.ok) await ledger.settle(held.id, amount(40));
    p.relay.heal();
    await partition(p, link);
    await rejoin(p, link);
    await waitFor(async () => (await windowRow(p)).spent >= 40, 5000, 'the spend on Redis');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a retry of the charge, had it been kept
    expect(await windowRow(p)).toEqual({ spent: 40, reserved: 0 });
  });

  it('a reservation whose reply came too late (it ran on Redis) is given back there', async () => {
    const p = await parts();
    const link = await p.link();
    const ledger = new RedisLedger(link, p.prefix, budgets, () => undefined);
    h.defer(() => ledger.close());
    p.relay.stall();
    const held = await ledger.reserve(['route:chat'], amount(100));
    expect(held).toMatchObject({ ok: true, id: expect.stringMatching(/^l:/) });
    p.relay.heal();
    if (held.ok) await ledger.settle(held.id, amount(40));
    await waitFor(async () => JSON.stringify(await windowRow(p)) === JSON.stringify({ spent: 40, reserved: 0 }), 5000, 'spent 40, nothing reserved');
  });

  it('a hold outlives a quiet window: its amounts are there to give back as long as the window counter is', async () => {
    const p = await parts();
    const link = await p.link();
    const ledger = new RedisLedger(link, p.prefix, budgets, () => undefined, 1000);
    h.defer(() => ledger.close());
    const held = await ledger.reserve(['route:chat'], amount(100));
    expect(held.ok).toBe(true);
    const id = held.ok ? held.id : '';
    const start = budgetWindow('month', Date.now()).start;
    const windowTtl = await p.direct.pttl(`${p.prefix}budget:tokens:month:${start}:route:chat`);
    const holdTtl = await p.direct.pttl(`${p.prefix}budget-hold:${id}`);
    expect(windowTtl).toBeGreaterThan(7 * 86_400_000);
    expect(holdTtl).toBeGreaterThanOrEqual(windowTtl - 60_000);
  });
});

const answer = (text: string): StoredAnswer => ({ status: 200, headers: ['content-type', 'application/json'], body: Buffer.from(text) });
const rec = (key: string, owner: string, fingerprint = 'fp'): IdempotencyRecordKey => ({ key, fingerprint, owner });

async function idempotency(p: Parts, direct = false): Promise<{ link: RedisLink; store: RedisIdempotency }> {
  const link = await p.link(direct);
  const local = new LocalIdempotency();
  const store = new RedisIdempotency(link, p.prefix, local);
  h.defer(() => {
    store.close();
    local.close();
  });
  return { link, store };
}

describe.skipIf(SKIP_REDIS)('Idempotency-Key records across an outage', () => {
  it('an answer completed locally during an outage is replayed after Redis is back, not run again', async () => {
    const p = await parts();
    const { link, store } = await idempotency(p);
    await partition(p, link);
    expect(await store.begin(rec('k', 'a'))).toEqual({ kind: 'owner' });
    await store.complete(rec('k', 'a'), answer('first'), 60_000);
    await rejoin(p, link);
    expect(await store.begin(rec('k', 'b'))).toEqual({ kind: 'completed', answer: answer('first') });
  });

  it('a record begun on Redis: a duplicate during the outage waits; the answer completed meanwhile is replayed here and reaches Redis', async () => {
    const p = await parts();
    const { link, store } = await idempotency(p);
    const other = (await idempotency(p, true)).store;
    expect(await store.begin(rec('k', 'a'))).toEqual({ kind: 'owner' });
    await partition(p, link);
    expect(await store.begin(rec('k', 'b'))).toMatchObject({ kind: 'running' });
    expect(await store.begin(rec('k', 'c', 'other body'))).toEqual({ kind: 'mismatch' });
    await store.complete(rec('k', 'a'), answer('first'), 60_000);
    expect(await store.begin(rec('k', 'b'))).toEqual({ kind: 'completed', answer: answer('first') });
    await rejoin(p, link);
    // The other instance (it never lost Redis) sees the answer too, well before the lease lapses.
    await waitFor(async () => (await other.begin(rec('k', 'd'))).kind === 'completed', 5000, 'the answer on Redis');
  });

  it('a record begun locally during the outage: a duplicate after Redis is back waits for it', async () => {
    const p = await parts();
    const { link, store } = await idempotency(p);
    await partition(p, link);
    expect(await store.begin(rec('k', 'a'))).toEqual({ kind: 'owner' });
    await rejoin(p, link);
    expect(await store.begin(rec('k', 'b'))).toMatchObject({ kind: 'running' });
    await store.complete(rec('k', 'a'), answer('first'), 60_000);
    expect(await store.begin(rec('k', 'b'))).toEqual({ kind: 'completed', answer: answer('first') });
  });
});
