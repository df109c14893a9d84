import { ClientLifetime } from '../util/client-lifetime.js';
import type { LocalIdempotency } from './local-idempotency.js';
import { type RedisLink, UNAVAILABLE } from '../redis/redis-link.js';
import { type BeginResult, type IdempotencyRecordKey, type IdempotencyState, type IdempotencyStore, PENDING_LEASE_MS, type StoredAnswer } from './types.js';

/** A record this instance owns on Redis, while its request runs. */
interface Owned {
  owner: string;
  fingerprint: string;
  state: IdempotencyState;
  renew: NodeJS.Timeout;
}

/**
 * Idempotency-Key records on Redis, shared by every instance: the transitions are scripts
 * (only the owner moves a record on), completion and abandonment are published so duplicates
 * waiting on any instance wake at once. A running record lasts PENDING_LEASE_MS unless its
 * owner renews it, so a record whose owner died frees itself. While Redis is away, new keys
 * are recorded locally (deduplicated per instance only); a record lives where it began.
 * What this instance knows itself comes first, whether Redis is there or not: a record it
 * runs (on Redis or locally) or an answer it keeps locally (completed while Redis was away).
 */
export class RedisIdempotency implements IdempotencyStore {
  /** Records this instance owns on Redis, by record key. */
  private readonly owned = new Map<string, Owned>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly channel: string;

  constructor(
    private readonly link: RedisLink,
    private readonly prefix: string,
    private readonly local: LocalIdempotency,
  ) {
    this.channel = `${prefix}idempotency`;
    link.subscribe(this.channel, (recordKey) => this.wake(recordKey));
  }

  async begin(record: IdempotencyRecordKey): Promise<BeginResult> {
    const here = this.local.peek(record) ?? this.ownedHere(record);
    if (here) return here;
    const key = this.recordKey(record);
    const reply = await this.link.run((redis) => redis.llmIdemBeginBuffer(key, record.fingerprint, record.owner, PENDING_LEASE_MS));
    if (reply === UNAVAILABLE) return this.local.begin(record);
    const kind = reply[0].toString();
    switch (kind) {
      case 'owner': {
        const renew = setInterval(() => void this.link.run((redis) => redis.llmIdemRenew(key, record.owner, '', PENDING_LEASE_MS)), PENDING_LEASE_MS / 3);
        renew.unref();
        this.owned.set(record.key, { owner: record.owner, fingerprint: record.fingerprint, state: 'PENDING', renew });
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
    const owned = this.ownedBy(record);
    if (!owned) return this.local.fallback(record);
    owned.state = 'EXECUTING_FALLBACK';
    await this.link.run((redis) => redis.llmIdemRenew(this.recordKey(record), record.owner, 'EXECUTING_FALLBACK', PENDING_LEASE_MS));
  }

  async complete(record: IdempotencyRecordKey, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (!this.stopRenewing(record)) return this.local.complete(record, answer, ttlMs);
    const reply = await this.link.runOrReplay((redis) =>
      redis.llmIdemComplete(this.recordKey(record), record.owner, answer.status, JSON.stringify(answer.headers), answer.body, ttlMs, this.channel),
    );
    // Away: duplicates here get the answer from the local store now, those elsewhere once
    // Redis answers and the completion is made there (only while the record is still ours).
    if (reply === UNAVAILABLE) this.local.store(record, answer, ttlMs);
  }

  async abandon(record: IdempotencyRecordKey): Promise<void> {
    if (!this.stopRenewing(record)) return this.local.abandon(record);
    // Away: given up once Redis answers, so duplicates elsewhere need not wait out the lease;
    // those here are woken now (the message would have woken them).
    const reply = await this.link.runOrReplay((redis) => redis.llmIdemAbandon(this.recordKey(record), record.owner, this.channel));
    if (reply === UNAVAILABLE) this.wake(this.recordKey(record));
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
    for (const owned of this.owned.values()) clearInterval(owned.renew);
    this.owned.clear();
  }

  private wake(recordKey: string): void {
    const waiters = this.waiters.get(recordKey);
    if (waiters) for (const wake of [...waiters]) wake();
  }

  /**
   * A duplicate of a record this instance runs on Redis: answered without asking Redis, so it
   * waits for the record even while Redis is away (or after it came back without the record).
   */
  private ownedHere(record: IdempotencyRecordKey): BeginResult | null {
    const owned = this.owned.get(record.key);
    if (!owned) return null;
    return owned.fingerprint === record.fingerprint ? { kind: 'running', state: owned.state } : { kind: 'mismatch' };
  }

  private ownedBy(record: IdempotencyRecordKey): Owned | undefined {
    const owned = this.owned.get(record.key);
    return owned?.owner === record.owner ? owned : undefined;
  }

  /** true when the record is this request's on Redis. */
  private stopRenewing(record: IdempotencyRecordKey): boolean {
    const owned = this.ownedBy(record);
    if (!owned) return false;
    clearInterval(owned.renew);
    this.owned.delete(record.key);
    return true;
  }

  private recordKey(record: IdempotencyRecordKey): string {
    return `${this.prefix}idempotency:${record.key}`;
  }
}
