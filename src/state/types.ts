import type { Config, Limits } from '../config/schema.js';
import type { SharedWeights } from './shared-weights.js';
import type { BudgetLedger } from '../usage/budgets/ledger.js';
import type { ClientLifetime } from '../util/client-lifetime.js';

/**
 * The state seam: what several llm-route instances must share to behave as one — limit
 * buckets, budgets, idempotency records, and the weight overrides / kill switches / rollbacks
 * the planner reads. Every call may cross a network, so every call is asynchronous and never
 * rejects: a backend that cannot answer answers from local state instead (and says so once).
 * The planner's gate stays synchronous: overrides are replicated into each instance's
 * weights (control/weights.ts), so reading a weight costs no round trip. Health stays per instance.
 */
export interface StateBackend {
  readonly kind: 'embedded' | 'redis';
  /** Shared counters are reachable (always true for embedded). */
  readonly up: boolean;
  limits: RateLimiter;
  budgets: BudgetLedger;
  idempotency: IdempotencyStore;
  /** A (re)loaded config: new budgets and limits apply to new requests. */
  configure(config: Config): void;
  /** What /admin/routes shows of a provider's limits, from this instance's point of view. */
  limitsView(provider: string, limits: Limits): LimitsView;
  /** Waits for what is still being written (settles, releases), then lets go of connections. */
  close(): Promise<void>;
}

// ─── limits ─────────────────────────────────────────────────────────────────

export interface LimitAsk {
  provider: string;
  limits: Limits;
  /** tpm tokens to take (prompt estimate + max tokens); 0 when only a request is counted. */
  tokens: number;
  /** Also take a place among the provider's requests in flight (`concurrency`). */
  slot: boolean;
  /** How long a concurrency slot may be held before it is given back on its own (its holder died). */
  slotMs: number;
  /** The leaky bucket: the most this request may wait for room. */
  maxWaitMs: number;
}

export type LimitGrant =
  | { ok: true; lease: LimitLease; waitedMs: number }
  /** No room within maxWaitMs. `retryAfterMs`: when there should be. */
  | { ok: false; limit: 'rpm' | 'tpm' | 'concurrency'; retryAfterMs: number; waitedMs: number }
  | { ok: false; limit: 'aborted'; retryAfterMs: 0; waitedMs: number };

/** What a request holds at a provider (its hold on the limits) until it ends. */
export interface LimitLease {
  readonly provider: string;
  readonly limits: Limits;
  readonly tokens: number;
  readonly slotId: string | null;
  /** Which counters it was taken from: a lease outlives a switch between Redis and local state. */
  readonly where: 'local' | 'shared';
}

export interface RateLimiter {
  /** Takes room at the provider, waiting (the leaky bucket) up to maxWaitMs; the client's leaving ends the wait. */
  acquire(ask: LimitAsk, client: ClientLifetime): Promise<LimitGrant>;
  /** The request ended: its slot is given back, and its tpm tokens reconciled with what it really used. */
  settle(lease: LimitLease, usedTokens: number): Promise<void>;
}

export interface LimitsView {
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  queue_ms: number;
  /** This instance's requests in flight at the provider (slots it holds). */
  in_flight: number;
  /** Tiers of this provider skipped by this instance because of these limits. */
  rate_limited: number;
}

// ─── idempotency ────────────────────────────────────────────────────────────

/** A stored answer, as the client first got it (a stream: its SSE bytes). */
export interface StoredAnswer {
  status: number;
  /** Flat name/value list of the response headers worth replaying. */
  headers: string[];
  body: Buffer;
}

export type IdempotencyState = 'PENDING' | 'EXECUTING_FALLBACK' | 'COMPLETED';

export type BeginResult =
  /** The record is this request's: it runs, and completes or abandons it. */
  | { kind: 'owner' }
  | { kind: 'completed'; answer: StoredAnswer }
  /** Another request with the key runs now. */
  | { kind: 'running'; state: IdempotencyState }
  /** The key was used with another body. */
  | { kind: 'mismatch' };

export interface IdempotencyRecordKey {
  /** The record's key: the client protocol and the client's Idempotency-Key. */
  key: string;
  /** sha256 of the canonical body. */
  fingerprint: string;
  /** This request, the record's would-be owner. */
  owner: string;
}

export interface IdempotencyStore {
  /** Creates the record as PENDING (this request owns it), or says what is there. */
  begin(record: IdempotencyRecordKey): Promise<BeginResult>;
  /** A tier failed and the next is tried. */
  fallback(record: IdempotencyRecordKey): Promise<void>;
  /** Stores the answer for `ttlMs` and wakes the duplicates waiting for it. */
  complete(record: IdempotencyRecordKey, answer: StoredAnswer, ttlMs: number): Promise<void>;
  /** No answer worth keeping (502/504/aborted): the record goes, the next duplicate runs. */
  abandon(record: IdempotencyRecordKey): Promise<void>;
  /** Resolves when the record changes (completed, abandoned, expired), or after `ms`, or when the client leaves. */
  changed(key: string, ms: number, client: ClientLifetime): Promise<void>;
}

/** How long a running request's record lasts without its owner renewing it (its process died). */
export const PENDING_LEASE_MS = 30_000;

// ─── overrides ──────────────────────────────────────────────────────────────

/** Binds the shared overrides to this instance's weights: local changes go out, others' come in. */
export interface WeightSync {
  attach(weights: SharedWeights): void;
  close(): Promise<void>;
}
