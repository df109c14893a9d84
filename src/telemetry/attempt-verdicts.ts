import type { AttemptOutcome } from '../protocols/core/names.js';
import type { AttemptFinished, AttemptRecord } from './request-events.js';

/**
 * Outcomes of a tier that answered properly but cannot serve this request: input it cannot
 * take (an image without a vision projector), a prompt longer than its context, a client's own
 * credential it refused (api_key: from_client). Another tier may serve it; this one is as
 * healthy as before.
 */
const PAYLOAD_SPECIFIC_OUTCOMES: ReadonlySet<AttemptOutcome> = new Set<AttemptOutcome>(['unsupported', 'context_length', 'credential_rejected']);

/** An attempt whose outcome tells nothing about the tier's health: the payload's fault, one it cannot carry, or the deadline's. */
export function isHealthNeutral(event: AttemptFinished): boolean {
  // too_long: the fit check skipped the tier before sending anything (it proves nothing alive either).
  return (
    event.blame === 'payload' ||
    PAYLOAD_SPECIFIC_OUTCOMES.has(event.record.outcome) ||
    event.record.outcome === 'too_long' ||
    (event.blame === null && event.record.outcome !== 'ok')
  );
}

/**
 * llm-route's own limit or budget kept a request from the tier (outcome `budget` or
 * `rate_limited` without an HTTP status; an upstream's 429 has one): nothing was sent to it.
 */
export function isLimitSkip(record: AttemptRecord): boolean {
  return record.status === undefined && (record.outcome === 'budget' || record.outcome === 'rate_limited');
}

/** The tier answered: a success, the payload's fault, or a payload it cannot carry. It is alive, whatever the payload. */
export function provesTierAlive(event: AttemptFinished): boolean {
  return event.record.outcome === 'ok' || event.blame === 'payload' || PAYLOAD_SPECIFIC_OUTCOMES.has(event.record.outcome);
}
