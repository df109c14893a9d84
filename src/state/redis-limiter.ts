import { nodeCrypto } from '../util/node-crypto.js';
import { sleep } from '../util/sleep.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { CONCURRENCY_RETRY_MS, type LocalLimiter } from './local-limiter.js';
import { type RedisCall, type RedisLink, UNAVAILABLE } from '../redis/redis-link.js';
import type { LimitAsk, LimitGrant, LimitLease, RateLimiter } from './types.js';

/** How often a request waiting for a concurrency slot held on other instances looks again. */
const SLOT_POLL_MS = 50;
/** A held slot is renewed this many times per lifetime: a renewal lost or late still leaves it time. */
const RENEWALS_PER_LIFETIME = 3;
/** Node's longest timer (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Provider limits shared by every instance on one Redis: one script call takes room (the
 * buckets and a slot, atomically), one gives it back. While Redis is away, each instance
 * enforces the limits on its own counters (the local limiter); a lease remembers where it
 * was taken, so it is given back there.
 */
export class RedisLimiter implements RateLimiter {
  /** Shared slots this instance holds, per provider (for /admin/routes). */
  private readonly held = new Map<string, number>();
  /**
   * Each held shared slot's renewal timer, by slot id: a slot lapses on Redis `slotMs` after it
   * was last renewed, so only a holder that died loses it; a stream that runs longer keeps it.
   */
  private readonly renewals = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly link: RedisLink,
    private readonly prefix: string,
    readonly local: LocalLimiter,
  ) {}

  async acquire(ask: LimitAsk, client: ClientLifetime): Promise<LimitGrant> {
    const started = performance.now();
    const deadline = started + ask.maxWaitMs;
    const concurrency = ask.slot ? (ask.limits.concurrency ?? 0) : 0;
    const { rpm = 0, tpm = 0 } = ask.limits;
    for (;;) {
      const left = Math.max(0, deadline - performance.now());
      const slotId = concurrency > 0 ? nodeCrypto().randomUUID() : '';
      // A lost reply may hide a script that ran: its slot and tokens are then given back on Redis.
      const undo = slotId || tpm ? this.giveBack(ask.provider, tpm, tpm ? ask.tokens : 0, slotId) : undefined;
      const reply = await this.link.run(
        (redis) => redis.llmLimitTake(...this.keys(ask.provider), rpm, tpm, ask.tokens, concurrency, Math.floor(left), slotId, ask.slotMs),
        undo,
      );
      if (reply === UNAVAILABLE) {
        const grant = await this.local.acquire({ ...ask, maxWaitMs: left }, client);
        return { ...grant, waitedMs: performance.now() - started } as LimitGrant;
      }
      const [taken, limit, waitMs] = reply;
      if (taken === 1) {
        const lease: LimitLease = { provider: ask.provider, limits: ask.limits, tokens: ask.tokens, slotId: slotId || null, where: 'shared' };
        if (lease.slotId) this.keep(lease.provider, lease.slotId, ask.slotMs);
        // The room was taken at the time the bucket will have it: the wait is the queue.
        if (waitMs > 0 && !(await sleep(waitMs, client))) {
          void this.settle(lease, ask.tokens);
          return { ok: false, limit: 'aborted', retryAfterMs: 0, waitedMs: performance.now() - started };
        }
        return { ok: true, lease, waitedMs: performance.now() - started };
      }
      if (limit === 'concurrency' && performance.now() < deadline) {
        if (!(await sleep(Math.min(SLOT_POLL_MS, Math.max(1, deadline - performance.now())), client))) {
          return { ok: false, limit: 'aborted', retryAfterMs: 0, waitedMs: performance.now() - started };
        }
        continue;
      }
      this.local.countRefusal(ask.provider);
      const retryAfterMs = limit === 'concurrency' ? CONCURRENCY_RETRY_MS : Math.max(1, waitMs);
      return { ok: false, limit: limit as 'rpm' | 'tpm' | 'concurrency', retryAfterMs, waitedMs: performance.now() - started };
    }
  }

  async settle(lease: LimitLease, usedTokens: number): Promise<void> {
    if (lease.where === 'local') return this.local.settle(lease, usedTokens);
    if (lease.slotId) this.letGo(lease.provider, lease.slotId);
    const delta = lease.limits.tpm ? lease.tokens - usedTokens : 0;
    if (!lease.slotId && delta === 0) return;
    // Away: given back once Redis answers, else its slot would block others for slotMs.
    await this.link.runOrReplay(this.giveBack(lease.provider, lease.limits.tpm ?? 0, delta, lease.slotId ?? ''));
  }

  /** Shared slots this instance holds, plus local ones (taken while Redis was away). */
  inFlight(provider: string): number {
    return (this.held.get(provider) ?? 0) + this.local.view(provider).inFlight;
  }

  /** Counts a slot taken and renews it on Redis until it is given back (the timer runs off the request path). */
  private keep(provider: string, slotId: string, slotMs: number): void {
    this.held.set(provider, (this.held.get(provider) ?? 0) + 1);
    const everyMs = Math.min(MAX_TIMER_MS, Math.max(1, Math.floor(slotMs / RENEWALS_PER_LIFETIME)));
    const timer = setInterval(RedisLimiter.renew, everyMs, this, this.keys(provider)[1], slotId, slotMs);
    timer.unref();
    this.renewals.set(slotId, timer);
  }

  private letGo(provider: string, slotId: string): void {
    const timer = this.renewals.get(slotId);
    if (!timer) return; // given back already
    clearInterval(timer);
    this.renewals.delete(slotId);
    this.held.set(provider, Math.max(0, (this.held.get(provider) ?? 1) - 1));
  }

  /** Away, a renewal is skipped: a slot then lapses only if Redis stays away for most of its lifetime. */
  private static renew(limiter: RedisLimiter, slots: string, slotId: string, slotMs: number): void {
    void limiter.link.run((redis) => redis.llmLimitRenew(slots, slotId, slotMs));
  }

  /**
   * The settle script: the slot goes (a ZREM of a slot already gone does nothing, so it may be
   * made twice) and `delta` tpm tokens go back (a second time at worst overfills the bucket,
   * which is capped at one second of the rate).
   */
  private giveBack(provider: string, tpm: number, delta: number, slotId: string): RedisCall<number> {
    return (redis) => redis.llmLimitSettle(...this.keys(provider), tpm, delta, slotId);
  }

  private keys(provider: string): [string, string] {
    return [`${this.prefix}limits:${provider}:buckets`, `${this.prefix}limits:${provider}:slots`];
  }
}
