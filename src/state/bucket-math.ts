import type { Limits } from '../config/schema.js';

/**
 * Token buckets that hold one second's worth of their rate (at least one request), refilled
 * continuously. A request takes its cost at once, even when that leaves the bucket below
 * zero: the deficit is the queue in front of it, and the time it takes to refill is its wait
 * (a leaky bucket, so a burst drains at exactly the rate). A request larger than the whole
 * bucket (tpm) goes when the bucket is full. The Lua script in redis/limit-scripts.ts is this same
 * arithmetic; both take time in milliseconds.
 */
export interface BucketLevels {
  /** Requests in the rpm bucket (may be negative: requests queued ahead). */
  requests: number;
  /** Tokens in the tpm bucket. */
  tokens: number;
  /** When the levels were last computed. */
  at: number;
}

export interface BucketRates {
  requestCap: number;
  requestPerMs: number;
  tokenCap: number;
  tokenPerMs: number;
}

export function bucketRates(limits: Limits): BucketRates {
  const rpm = limits.rpm ?? 0;
  const tpm = limits.tpm ?? 0;
  return {
    requestCap: rpm > 0 ? Math.max(1, rpm / 60) : 0,
    requestPerMs: rpm / 60_000,
    tokenCap: tpm / 60,
    tokenPerMs: tpm / 60_000,
  };
}

/** Full buckets: nothing was sent yet. */
export function fullBuckets(rates: BucketRates, now: number): BucketLevels {
  return { requests: rates.requestCap, tokens: rates.tokenCap, at: now };
}

/** The levels at `now`, refilled since they were last computed (never above the caps). */
export function refill(levels: BucketLevels, rates: BucketRates, now: number): BucketLevels {
  const elapsed = Math.max(0, now - levels.at);
  return {
    requests: rates.requestPerMs > 0 ? Math.min(rates.requestCap, levels.requests + elapsed * rates.requestPerMs) : 0,
    tokens: rates.tokenPerMs > 0 ? Math.min(rates.tokenCap, levels.tokens + elapsed * rates.tokenPerMs) : 0,
    at: Math.max(levels.at, now),
  };
}

export type TakeResult = { ok: true; levels: BucketLevels; waitMs: number } | { ok: false; limit: 'rpm' | 'tpm'; waitMs: number };

/**
 * Takes one request (when `requests`) and `tokens` from refilled levels if the wait for room
 * is at most `maxWaitMs`; else takes nothing and says how long the wait would be.
 */
export function take(levels: BucketLevels, rates: BucketRates, requests: number, tokens: number, maxWaitMs: number): TakeResult {
  let waitMs = 0;
  let limit: 'rpm' | 'tpm' = 'rpm';
  if (rates.requestPerMs > 0 && requests > 0) {
    const need = Math.min(requests, rates.requestCap);
    if (levels.requests < need) waitMs = (need - levels.requests) / rates.requestPerMs;
  }
  if (rates.tokenPerMs > 0 && tokens > 0) {
    const need = Math.min(tokens, rates.tokenCap);
    const tokenWait = levels.tokens < need ? (need - levels.tokens) / rates.tokenPerMs : 0;
    if (tokenWait > waitMs) {
      waitMs = tokenWait;
      limit = 'tpm';
    }
  }
  if (waitMs > maxWaitMs) return { ok: false, limit, waitMs: Math.ceil(waitMs) };
  return {
    ok: true,
    waitMs: Math.ceil(waitMs),
    levels: {
      requests: rates.requestPerMs > 0 ? levels.requests - requests : 0,
      tokens: rates.tokenPerMs > 0 ? levels.tokens - tokens : 0,
      at: levels.at,
    },
  };
}

/** Gives back (`delta` > 0) or takes more (`delta` < 0) tpm tokens once the real usage is known. */
export function reconcile(levels: BucketLevels, rates: BucketRates, delta: number): BucketLevels {
  if (rates.tokenPerMs <= 0 || delta === 0) return levels;
  return { ...levels, tokens: Math.min(rates.tokenCap, levels.tokens + delta) };
}
