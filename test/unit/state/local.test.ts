import { describe, expect, it } from 'vitest';
import { ClientLifetime } from '../../../src/util/client-lifetime.js';
import { bucketRates, fullBuckets, refill, take } from '../../../src/state/bucket-math.js';
import { LocalIdempotency } from '../../../src/state/local-idempotency.js';
import { LocalLimiter } from '../../../src/state/local-limiter.js';
import type { LimitAsk } from '../../../src/state/types.js';
import { canonicalJson, jsonFingerprint } from '../../../src/util/canonical-json.js';

describe('token buckets', () => {
  it('hold one second of the rate (at least one request) and refill continuously', () => {
    expect(bucketRates({ rpm: 600, queue_ms: 0 })).toMatchObject({ requestCap: 10, requestPerMs: 0.01, tokenCap: 0 });
    expect(bucketRates({ rpm: 6, queue_ms: 0 }).requestCap).toBe(1);
    expect(bucketRates({ tpm: 60_000, queue_ms: 0 })).toMatchObject({ tokenCap: 1000, tokenPerMs: 1 });
    const rates = bucketRates({ rpm: 60, queue_ms: 0 }); // 1 per second, bucket of 1
    let levels = fullBuckets(rates, 0);
    const first = take(levels, rates, 1, 0, 0);
    expect(first).toMatchObject({ ok: true, waitMs: 0 });
    levels = (first as { levels: typeof levels }).levels;
    // Empty: the next one waits a second, or is refused when it may not wait that long.
    expect(take(levels, rates, 1, 0, 999)).toEqual({ ok: false, limit: 'rpm', waitMs: 1000 });
    const queued = take(levels, rates, 1, 0, 1000);
    expect(queued).toMatchObject({ ok: true, waitMs: 1000 });
    // Behind it, the third waits two seconds: the queue drains at the rate.
    expect(take((queued as { levels: typeof levels }).levels, rates, 1, 0, 5000)).toMatchObject({ ok: true, waitMs: 2000 });
    expect(refill(levels, rates, 500).requests).toBeCloseTo(0.5);
    expect(refill(levels, rates, 10_000).requests).toBe(1);
  });

  it('a request larger than the tpm bucket goes when the bucket is full, and leaves a deficit', () => {
    const rates = bucketRates({ tpm: 6000, queue_ms: 0 }); // 100 tokens, 0.1 per ms
    const full = fullBuckets(rates, 0);
    const big = take(full, rates, 1, 250, 0);
    expect(big).toMatchObject({ ok: true, waitMs: 0 });
    const after = (big as { levels: typeof full }).levels;
    expect(after.tokens).toBe(-150);
    // The next must wait for the deficit and its own share: (10 + 150) / 0.1 ms.
    expect(take(after, rates, 1, 10, 0)).toEqual({ ok: false, limit: 'tpm', waitMs: 1600 });
  });
});

const ask = (fields: Partial<LimitAsk>): LimitAsk => ({
  provider: 'paid',
  limits: { queue_ms: 0 },
  tokens: 0,
  slot: false,
  slotMs: 60_000,
  maxWaitMs: 0,
  ...fields,
});

describe('the local limiter', () => {
  it('queues within queue_ms at the rate, refuses beyond it with when to come back', async () => {
    const limiter = new LocalLimiter();
    const client = new ClientLifetime();
    const limits = { rpm: 600, queue_ms: 250 }; // 10 per second, a bucket of 10
    const started = performance.now();
    const grants = await Promise.all(Array.from({ length: 14 }, () => limiter.acquire(ask({ limits, maxWaitMs: 250 }), client)));
    const elapsed = performance.now() - started;
    // 10 from the bucket at once, 2 more within 250 ms (one per 100 ms), the rest refused.
    expect(grants.filter((g) => g.ok)).toHaveLength(12);
    const refused = grants.filter((g) => !g.ok);
    expect(refused).toHaveLength(2);
    for (const r of refused) expect(r).toMatchObject({ ok: false, limit: 'rpm' });
    expect((refused[0] as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(250);
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(limiter.view('paid')).toEqual({ inFlight: 0, refused: 2 });
  });

  it('concurrency: waits for a slot to be given back, else is refused; the tpm bucket is reconciled with usage', async () => {
    const limiter = new LocalLimiter();
    const client = new ClientLifetime();
    const limits = { concurrency: 1, tpm: 6000, queue_ms: 1000 };
    const a = await limiter.acquire(ask({ limits, tokens: 100, slot: true, maxWaitMs: 1000 }), client);
    expect(a.ok).toBe(true);
    expect(limiter.view('paid').inFlight).toBe(1);
    const waiting = limiter.acquire(ask({ limits, tokens: 10, slot: true, maxWaitMs: 1000 }), client);
    // a used 20 of its 100 tokens: 80 go back, so b does not have to wait for the bucket.
    setTimeout(() => void limiter.settle((a as Extract<typeof a, { ok: true }>).lease, 20), 50);
    const b = await waiting;
    expect(b).toMatchObject({ ok: true });
    expect(b.waitedMs).toBeGreaterThanOrEqual(40);
    expect(b.waitedMs).toBeLessThan(900);
    const c = await limiter.acquire(ask({ limits, slot: true, maxWaitMs: 30 }), client);
    expect(c).toMatchObject({ ok: false, limit: 'concurrency', retryAfterMs: 1000 });
  });

  it('a client that leaves while queued gets out of the queue at once', async () => {
    const limiter = new LocalLimiter();
    const limits = { concurrency: 1, queue_ms: 5000 };
    const client = new ClientLifetime();
    expect((await limiter.acquire(ask({ limits, slot: true, maxWaitMs: 5000 }), client)).ok).toBe(true);
    const leaving = new ClientLifetime();
    const started = performance.now();
    const waiting = limiter.acquire(ask({ limits, slot: true, maxWaitMs: 5000 }), leaving);
    setTimeout(() => leaving.abort(), 20);
    expect(await waiting).toMatchObject({ ok: false, limit: 'aborted' });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('local idempotency records', () => {
  const rec = (owner: string, fingerprint = 'f1') => ({ key: 'chat:k', fingerprint, owner });
  const answer = { status: 200, headers: ['content-type', 'application/json'], body: Buffer.from('{"ok":1}') };

  it('PENDING for its owner, running for others, a mismatch for another body; completed answers replay until their TTL', async () => {
    let now = 1_000;
    const store = new LocalIdempotency(() => now);
    expect(await store.begin(rec('a'))).toEqual({ kind: 'owner' });
    expect(await store.begin(rec('b'))).toEqual({ kind: 'running', state: 'PENDING' });
    await store.fallback(rec('a'));
    expect(await store.begin(rec('b'))).toEqual({ kind: 'running', state: 'EXECUTING_FALLBACK' });
    expect(await store.begin(rec('b', 'f2'))).toEqual({ kind: 'mismatch' });
    // Only the owner completes it.
    await store.complete(rec('b'), { ...answer, body: Buffer.from('forged') }, 10_000);
    expect((await store.begin(rec('c'))).kind).toBe('running');
    await store.complete(rec('a'), answer, 10_000);
    expect(await store.begin(rec('c'))).toEqual({ kind: 'completed', answer });
    now += 10_001;
    expect(await store.begin(rec('d'))).toEqual({ kind: 'owner' });
    store.close();
  });

  it('wakes waiting duplicates when the record completes or is abandoned; abandoned keys run again', async () => {
    const store = new LocalIdempotency();
    const client = new ClientLifetime();
    await store.begin(rec('a'));
    const started = performance.now();
    const woken = store.changed('chat:k', 5000, client);
    setTimeout(() => void store.abandon(rec('a')), 20);
    await woken;
    expect(performance.now() - started).toBeLessThan(2000);
    expect(await store.begin(rec('b'))).toEqual({ kind: 'owner' });
    store.close();
  });

  it('peek says what a live record is without creating one; store keeps an answer for a record that lived elsewhere', async () => {
    let now = 1_000;
    const store = new LocalIdempotency(() => now);
    expect(store.peek(rec('a'))).toBeNull();
    expect(await store.begin(rec('a'))).toEqual({ kind: 'owner' });
    expect(store.peek(rec('b'))).toEqual({ kind: 'running', state: 'PENDING' });
    store.store({ key: 'chat:other', fingerprint: 'f1', owner: 'on-redis' }, answer, 10_000);
    expect(store.peek({ key: 'chat:other', fingerprint: 'f1', owner: 'x' })).toEqual({ kind: 'completed', answer });
    expect(store.peek({ key: 'chat:other', fingerprint: 'f2', owner: 'x' })).toEqual({ kind: 'mismatch' });
    now += 10_001;
    expect(store.peek({ key: 'chat:other', fingerprint: 'f1', owner: 'x' })).toBeNull();
    store.close();
  });

  it('keeps at most its byte budget of answers, dropping the oldest', async () => {
    const store = new LocalIdempotency(Date.now, 10);
    for (const key of ['k1', 'k2', 'k3']) {
      await store.begin({ key, fingerprint: 'f', owner: 'o' });
      await store.complete({ key, fingerprint: 'f', owner: 'o' }, { status: 200, headers: [], body: Buffer.alloc(4) }, 60_000);
    }
    expect((await store.begin({ key: 'k1', fingerprint: 'f', owner: 'x' })).kind).toBe('owner');
    expect((await store.begin({ key: 'k3', fingerprint: 'f', owner: 'x' })).kind).toBe('completed');
    store.close();
  });
});

describe('canonical JSON', () => {
  it('is the same text whatever the key order, different for different values', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: null }], c: 'é' })).toBe('{"a":[{"x":null,"y":2}],"b":1,"c":"é"}');
    expect(jsonFingerprint('chat', { a: 1, b: { c: 2, d: 3 } })).toBe(jsonFingerprint('chat', { b: { d: 3, c: 2 }, a: 1 }));
    expect(jsonFingerprint('chat', { a: 1 })).not.toBe(jsonFingerprint('chat', { a: 2 }));
    expect(jsonFingerprint('chat', [1, 2])).not.toBe(jsonFingerprint('chat', [2, 1]));
    expect(jsonFingerprint('chat', { a: 1 })).not.toBe(jsonFingerprint('messages', { a: 1 }));
  });
});
