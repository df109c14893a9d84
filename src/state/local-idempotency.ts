import type { ClientLifetime } from '../util/client-lifetime.js';
import type { BeginResult, IdempotencyRecordKey, IdempotencyState, IdempotencyStore, StoredAnswer } from './types.js';

interface LocalRecord {
  fingerprint: string;
  owner: string;
  state: IdempotencyState;
  answer: StoredAnswer | null;
  /** Epoch ms a completed record is dropped; a running one lasts as long as its owner (in this process). */
  expiresAt: number;
}

/** Stored answers kept in memory at most, in all: the oldest go first beyond it. */
const MAX_STORED_BYTES = 256 * 1024 * 1024;
const SWEEP_MS = 60_000;

/**
 * Idempotency records in this process: the embedded backend's, and what a Redis backend falls
 * back to while Redis is away (a key is then deduplicated per instance only). A running
 * record's owner lives in this process and always ends it (complete or abandon), so it needs
 * no lease here.
 */
export class LocalIdempotency implements IdempotencyStore {
  private readonly records = new Map<string, LocalRecord>();
  private readonly listeners = new Map<string, Set<() => void>>();
  private storedBytes = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly maxBytes = MAX_STORED_BYTES,
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  async begin(record: IdempotencyRecordKey): Promise<BeginResult> {
    const found = this.peek(record);
    if (found) return found;
    this.records.set(record.key, { fingerprint: record.fingerprint, owner: record.owner, state: 'PENDING', answer: null, expiresAt: Infinity });
    return { kind: 'owner' };
  }

  /** What a live record of the key says to this request, without creating one: null when there is none. */
  peek(record: IdempotencyRecordKey): BeginResult | null {
    const found = this.live(record.key);
    if (!found) return null;
    if (found.fingerprint !== record.fingerprint) return { kind: 'mismatch' };
    if (found.state === 'COMPLETED' && found.answer) return { kind: 'completed', answer: found.answer };
    return { kind: 'running', state: found.state };
  }

  async fallback(record: IdempotencyRecordKey): Promise<void> {
    const found = this.owned(record);
    if (found) found.state = 'EXECUTING_FALLBACK';
  }

  async complete(record: IdempotencyRecordKey, answer: StoredAnswer, ttlMs: number): Promise<void> {
    if (this.owned(record)) this.store(record, answer, ttlMs);
  }

  /**
   * Keeps the answer of a request whose record lived elsewhere (on Redis, unreachable when it
   * ended), so that duplicates reaching this process are answered with it.
   */
  store(record: IdempotencyRecordKey, answer: StoredAnswer, ttlMs: number): void {
    const previous = this.records.get(record.key);
    if (previous) this.drop(record.key, previous);
    // Inserted last: the map's order is the order answers were stored in, oldest first.
    this.records.set(record.key, { fingerprint: record.fingerprint, owner: record.owner, state: 'COMPLETED', answer, expiresAt: this.now() + ttlMs });
    this.storedBytes += answer.body.length;
    this.evict();
    this.notify(record.key);
  }

  async abandon(record: IdempotencyRecordKey): Promise<void> {
    if (!this.owned(record)) return;
    this.records.delete(record.key);
    this.notify(record.key);
  }

  changed(key: string, ms: number, client: ClientLifetime): Promise<void> {
    return new Promise((resolve) => {
      let listeners = this.listeners.get(key);
      if (!listeners) this.listeners.set(key, (listeners = new Set()));
      const set = listeners;
      const done = (): void => {
        clearTimeout(timer);
        client.offAbort(done);
        set.delete(done);
        if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(done);
      client.onAbort(done);
      if (client.aborted) done();
    });
  }

  /** Stops the sweeper. */
  close(): void {
    clearInterval(this.sweeper);
  }

  private owned(record: IdempotencyRecordKey): LocalRecord | undefined {
    const found = this.records.get(record.key);
    return found && found.owner === record.owner && found.state !== 'COMPLETED' ? found : undefined;
  }

  private live(key: string): LocalRecord | undefined {
    const found = this.records.get(key);
    if (found && found.expiresAt <= this.now()) {
      this.drop(key, found);
      return undefined;
    }
    return found;
  }

  private notify(key: string): void {
    const listeners = this.listeners.get(key);
    if (listeners) for (const listener of [...listeners]) listener();
  }

  private drop(key: string, record: LocalRecord): void {
    this.records.delete(key);
    if (record.answer) this.storedBytes -= record.answer.body.length;
  }

  private evict(): void {
    for (const [key, record] of this.records) {
      if (this.storedBytes <= this.maxBytes) return;
      if (record.state === 'COMPLETED') this.drop(key, record);
    }
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, record] of this.records) if (record.expiresAt <= now) this.drop(key, record);
  }
}
