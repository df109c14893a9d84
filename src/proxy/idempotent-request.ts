import { nodeCrypto } from '../util/node-crypto.js';
import type { IdempotencyConfig } from '../config/schema.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { IdempotencyRecordKey, IdempotencyStore } from '../state/types.js';
import { jsonFingerprint } from '../util/canonical-json.js';
import type { AnswerKeeping } from './exchange.js';
import type { FinishFields } from './request-end.js';

/** A waiting duplicate looks at the record at least this often (a lost wake-up, an owner that died). */
const RECHECK_MS = 1_000;
const MAX_KEY_LENGTH = 255;

/**
 * A request with an Idempotency-Key that runs: it owns the key's record until it ends, then
 * stores its answer (a success, or the upstream's own payload error) or, for an answer a
 * client should be free to try again (502, 504, an interrupted stream, a client that left),
 * gives the record up so the next duplicate runs.
 */
export class IdempotentRun {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly record: IdempotencyRecordKey,
    private readonly ttlMs: number,
  ) {}

  /** A tier failed and the next is tried: PENDING → EXECUTING_FALLBACK. */
  fallback(): void {
    void this.store.fallback(this.record);
  }

  /** Called once the request has ended (or failed to). */
  async end(exchange: AnswerKeeping): Promise<void> {
    const answer = exchange.keptAnswer();
    if (answer && storable(exchange.ending)) await this.store.complete(this.record, answer, this.ttlMs);
    else await this.store.abandon(this.record);
  }
}

function storable(ending: FinishFields | null): boolean {
  if (!ending || ending.status >= 500) return false;
  return ending.outcome === 'ok' || ending.outcome === 'upstream_rejected';
}

/**
 * The Idempotency-Key step, after the request was read (so its body is known) and began:
 * the first request with the key runs (its IdempotentRun is returned); a duplicate of a
 * completed one gets the stored answer; a duplicate of a running one waits for it (up to
 * `wait_ms`) and then gets its answer, or runs itself if the first gave the record up; the
 * key with another body is refused. 'answered': the client has its answer.
 */
export async function enterIdempotent(
  exchange: AnswerKeeping,
  store: IdempotencyStore,
  request: ClientRequest,
  key: string,
  settings: IdempotencyConfig,
): Promise<IdempotentRun | 'answered'> {
  if (key.length > MAX_KEY_LENGTH) {
    const message = `Idempotency-Key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are accepted`;
    exchange.fail({ status: 400, kind: 'invalid_request', code: 'invalid_idempotency_key', message }, { outcome: 'bad_request' });
    return 'answered';
  }
  // The same key means the same thing only in one protocol; the body is compared as JSON, key order aside.
  const record: IdempotencyRecordKey = {
    key: `${request.protocol}:${key}`,
    fingerprint: jsonFingerprint(request.protocol, request.body),
    owner: `${exchange.id}:${nodeCrypto().randomUUID()}`,
  };
  const waitUntil = performance.now() + settings.wait_ms;
  for (;;) {
    const found = await store.begin(record);
    switch (found.kind) {
      case 'owner':
        exchange.keepAnswer();
        return new IdempotentRun(store, record, settings.ttl_s * 1000);
      case 'completed':
        exchange.replay(found.answer);
        exchange.finish({ tier: null, status: found.answer.status, outcome: 'replayed' });
        return 'answered';
      case 'mismatch': {
        const message = `Idempotency-Key "${key}" was already used with a different request body; use a new key for a new request`;
        exchange.fail(
          { status: 422, kind: 'invalid_request', code: 'idempotency_key_reused', message },
          { outcome: 'bad_request', logged: 'Idempotency-Key reused with a different body' },
        );
        return 'answered';
      }
      case 'running': {
        const left = waitUntil - performance.now();
        if (left <= 0) {
          const message = `a request with Idempotency-Key "${key}" is still running after ${settings.wait_ms} ms; try again later`;
          exchange.fail(
            { status: 409, kind: 'invalid_request', code: 'idempotency_request_in_progress', message },
            { outcome: 'failed', logged: 'the request with this Idempotency-Key is still running' },
            { 'retry-after': 1 },
          );
          return 'answered';
        }
        await store.changed(record.key, Math.min(left, RECHECK_MS), exchange.client);
        if (exchange.client.aborted) {
          exchange.endAborted();
          return 'answered';
        }
      }
    }
  }
}
