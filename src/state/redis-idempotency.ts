import { ClientLifetime } from '../proxy/client-lifetime.js';
import type { LocalIdempotency } from './local-idempotency.js';
import { type RedisLink, UNAVAILABLE } from './redis-link.js';
import { type BeginResult, type IdempotencyRecordKey, type IdempotencyState, type IdempotencyStore, PENDING_LEASE_MS, type StoredAnswer } from './types.js';

/**
 * Idempotency-Key records on Redis, shared by every instance: the transitions are scripts
 * (only the owner moves a record on), completion and abandonment are published so duplicates
 * waiting on any instance wake at once. A running record lasts PENDING_LEASE_MS unless its
 * owner renews it, so a record whose owner died frees itself. While Redis is away, new keys
 * are recorded locally (deduplicated per instance only); a record lives where it began.
 */
export class RedisIdempotency implements IdempotencyStore {
  /** Records this instance owns on Redis: owner → its lease renewal. */
  private readonly owned = new Map<string, NodeJS.Timeout>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly channel: string;

  constructor(private readonly link: RedisLink, private readonly prefix: string, private readonly local: LocalIdempotency) {
    this.channel = `${prefix}idempotency`;
    link.subscribe(this.channel, (recordKey) => this.wake(recordKey));
  }

  async begin(record: IdempotencyRecordKey): Promise<BeginResult> {
    const key = this.recordKey(record);
    // A record that began on local state ends there (Redis may have come back meanwhile).
    const reply = await this.link.run((redis) => redis.llmIdemBeginBuffer(key, record.fingerprint, record.owner, PENDING_LEASE_MS));
    if (reply === UNAVAILABLE) return this.local.begin(record);
    const kind = reply[0].toString();
    switch (kind) {
      case 'owner': {
        const renew = setInterval(() => void this.link.run((redis) => redis.llmIdemRenew(key, record.owner, '', PENDING_LEASE_MS)), PENDING_LEASE_MS / 3);
        renew.unref();
        this.owned.set(record.owner, renew);
        return { kind: 'owner' };
      }
      case 'mismatch':
        return { kind: 'mismatch' };
      case 'completed': {
        const answer: StoredAnswer = { status: Number(reply[1].toString()), headers: JSON.parse(reply[2].toString()) as string[], body: reply[3] };
        return { kind: 'completed', answer };
      }
      default:
        return { kind: 'running', state: reply[1].toString() as IdempotencyState };
    }
  }

  async fallback(record: IdempotencyRecordKey): Promise<void> {
    if (!this.owned.has(record.owner)) return this.local.fallback(record);
    await this.link.run((redis) => redis.llmIdemRenew(this.recordKey(record), record.owner, 'EXECUTING_FALLBACK', PENDING_LEASE_MS));
  }

  async complete(record: IdempotencyRecordKey, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (!this.stopRenewing(record)) return this.local.complete(record, answer, ttlMs);
    // Away now: the record lapses with its lease, and a duplicate then runs again.
    await this.link.run((redis) => redis.llmIdemComplete(this.recordKey(record), record.owner, answer.status, JSON.stringify(answer.headers), answer.body, ttlMs, this.channel));
  }

  async abandon(record: IdempotencyRecordKey): Promise<void> {
    if (!this.stopRenewing(record)) return this.local.abandon(record);
    await this.link.run((redis) => redis.llmIdemAbandon(this.recordKey(record), record.owner, this.channel));
  }

  /** Wakes on a message for this record (any instance), a change of a local record, `ms`, or the client leaving. */
  async changed(key: string, ms: number, client: ClientLifetime): Promise<void> {
    const recordKey = `${this.prefix}idempotency:${key}`;
    const done = new ClientLifetime();
    const forward = (): void => done.abort();
    client.onAbort(forward);
    let waiters = this.waiters.get(recordKey);
    if (!waiters) this.waiters.set(recordKey, (waiters = new Set()));
    const set = waiters;
    set.add(forward);
    await this.local.changed(key, ms, done);
    set.delete(forward);
    if (set.size === 0 && this.waiters.get(recordKey) === set) this.waiters.delete(recordKey);
    client.offAbort(forward);
  }

  close(): void {
    for (const timer of this.owned.values()) clearInterval(timer);
    this.owned.clear();
  }

  private wake(recordKey: string): void {
    const waiters = this.waiters.get(recordKey);
    if (waiters) for (const wake of [...waiters]) wake();
  }

  /** true when the record is this instance's on Redis. */
  private stopRenewing(record: IdempotencyRecordKey): boolean {
    const timer = this.owned.get(record.owner);
    if (!timer) return false;
    clearInterval(timer);
    this.owned.delete(record.owner);
    return true;
  }

  private recordKey(record: IdempotencyRecordKey): string {
    return `${this.prefix}idempotency:${record.key}`;
  }
}
