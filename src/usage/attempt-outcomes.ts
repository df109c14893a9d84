/**
 * Attempt outcomes that say nothing about a tier's health: the payload's fault, the route's
 * deadline, the client leaving, a tier skipped before it was tried, or the client's own
 * credential missing or refused (api_key: from_client). They are neither failures nor
 * successes in an incident's error rate.
 */
export const NEUTRAL_OUTCOMES = [
  'bad_request',
  'content_policy',
  'deadline',
  'client_abort',
  'unsupported',
  'budget',
  'too_long',
  'hedge_lost',
  'no_client_credential',
  'credential_rejected',
] as const;

/** SQL: llm-route's own limits skipped the tier (an upstream's 429 is `rate_limited` too, with its status). */
const LIMIT_SKIP_SQL = "(a.outcome = 'rate_limited' AND a.status IS NULL)";

/** SQL: the attempt (alias `a`) failed through the tier's fault. */
export const FAILED_ATTEMPT_SQL = `a.outcome <> 'ok' AND a.outcome NOT IN (${NEUTRAL_OUTCOMES.map((o) => `'${o}'`).join(', ')}) AND NOT ${LIMIT_SKIP_SQL}`;

/** SQL: the attempt counts toward the tier's error rate. */
export const COUNTED_ATTEMPT_SQL = `a.outcome NOT IN (${NEUTRAL_OUTCOMES.map((o) => `'${o}'`).join(', ')}) AND NOT ${LIMIT_SKIP_SQL}`;
