import { nodeCrypto } from '../util/node-crypto.js';
import type { Limits } from '../config/schema.js';
import { sleep } from '../util/sleep.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { type BucketLevels, bucketRates, fullBuckets, reconcile, refill, take } from './bucket-math.js';
import type { LimitAsk, LimitGrant, LimitLease, RateLimiter } from './types.js';

/** When a provider is at its concurrency: no one knows when a slot frees up; a second is a fair guess. */
export const CONCURRENCY_RETRY_MS = 1_000;

interface ProviderState {
  levels: BucketLevels | null;
  /** Slot ids held now. */
  slots: Set<string>;
  /** Requests waiting for a slot, first come first served. */
  waiters: Array<() => void>;
  refused: number;
}

/**
 * The provider limits in this process: the embedded backend's, and what a Redis backend
 * falls back to while Redis is away (each instance then enforces the limits on its own).
 */
export class LocalLimiter implements RateLimiter {
  private readonly providers = new Map<string, ProviderState>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  async acquire(ask: LimitAsk, client: ClientLifetime): Promise<LimitGrant> {
    const state = this.stateOf(ask.provider);
    const started = this.now();
    const deadline = started + ask.maxWaitMs;
    const concurrency = ask.slot ? ask.limits.concurrency : undefined;
    for (;;) {
      const now = this.now();
      if (concurrency !== undefined && state.slots.size >= concurrency) {
        if (now >= deadline) return this.refuse(state, 'concurrency', CONCURRENCY_RETRY_MS, now - started);
        if (!(await this.waitForSlot(state, deadline - now, client))) return { ok: false, limit: 'aborted', retryAfterMs: 0, waitedMs: this.now() - started };
        continue;
      }
      const rates = bucketRates(ask.limits);
      const levels = refill(state.levels ?? fullBuckets(rates, now), rates, now);
      const taken = take(levels, rates, 1, ask.tokens, Math.max(0, deadline - now));
      if (!taken.ok) {
        state.levels = levels;
        return this.refuse(state, taken.limit, taken.waitMs, now - started);
      }
      state.levels = taken.levels;
      const slotId = concurrency !== undefined ? nodeCrypto().randomUUID() : null;
      if (slotId) state.slots.add(slotId);
      const lease: LimitLease = { provider: ask.provider, limits: ask.limits, tokens: ask.tokens, slotId, where: 'local' };
      // Room is reserved at the time the bucket will have it: waiting for it is the queue.
      if (taken.waitMs > 0 && !(await sleep(taken.waitMs, client))) {
        void this.settle(lease, ask.tokens);
        return { ok: false, limit: 'aborted', retryAfterMs: 0, waitedMs: this.now() - started };
      }
      return { ok: true, lease, waitedMs: this.now() - started };
    }
  }

  async settle(lease: LimitLease, usedTokens: number): Promise<void> {
    const state = this.providers.get(lease.provider);
    if (!state) return;
    if (lease.tokens > 0 && state.levels) {
      const rates = bucketRates(lease.limits);
      state.levels = reconcile(refill(state.levels, rates, this.now()), rates, lease.tokens - usedTokens);
    }
    if (lease.slotId && state.slots.delete(lease.slotId)) state.waiters.shift()?.();
  }

  /** Counters for /admin/routes. */
  view(provider: string): { inFlight: number; refused: number } {
    const state = this.providers.get(provider);
    return { inFlight: state?.slots.size ?? 0, refused: state?.refused ?? 0 };
  }

  /** A refusal counted by a backend that asked elsewhere first. */
  countRefusal(provider: string): void {
    this.stateOf(provider).refused++;
  }

  /** Forgets the buckets (a Redis backend rejoining: the shared ones are the truth again); slots held stay held. */
  resetBuckets(): void {
    for (const state of this.providers.values()) state.levels = null;
  }

  private refuse(state: ProviderState, limit: 'rpm' | 'tpm' | 'concurrency', retryAfterMs: number, waitedMs: number): LimitGrant {
    state.refused++;
    return { ok: false, limit, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)), waitedMs };
  }

  /** Waits for a slot to be given back; false when the client left. */
  private waitForSlot(state: ProviderState, ms: number, client: ClientLifetime): Promise<boolean> {
    if (client.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (result: boolean): void => {
        clearTimeout(timer);
        client.offAbort(onAbort);
        const i = state.waiters.indexOf(wake);
        if (i !== -1) state.waiters.splice(i, 1);
        resolve(result);
      };
      const wake = (): void => done(true);
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      state.waiters.push(wake);
      client.onAbort(onAbort);
    });
  }

  private stateOf(provider: string): ProviderState {
    let state = this.providers.get(provider);
    if (!state) this.providers.set(provider, (state = { levels: null, slots: new Set(), waiters: [], refused: 0 }));
    return state;
  }
}

/** The limits as /admin/routes lists them. */
export function configuredLimits(limits: Limits): { rpm: number | null; tpm: number | null; concurrency: number | null; queue_ms: number } {
  return { rpm: limits.rpm ?? null, tpm: limits.tpm ?? null, concurrency: limits.concurrency ?? null, queue_ms: limits.queue_ms };
}
