import type { Database } from 'better-sqlite3';
import { percentile } from '../../util/percentile.js';
import { COUNTED_ATTEMPT_SQL, FAILED_ATTEMPT_SQL } from '../attempt-outcomes.js';
import { round1 } from '../usage-report.js';
import type { IncidentRecord } from './incident-rows.js';

/** How far before an incident opened its first bad request is looked for, unless its rule names a window. */
const DEFAULT_LOOKBACK_MS = 60_000;

/** One period's numbers for the incident's tier. */
export interface PeriodNumbers {
  from: string;
  to: string;
  /** The tier's own TTFT (attempt start to first content) over its ok streaming attempts. */
  ttft_p99_ms: number | null;
  ttft_p50_ms: number | null;
  ttft_samples: number;
  attempts: number;
  failed_attempts: number;
  error_rate: number | null;
  /** Malformed or truncated chunks in streams the tier answered. */
  chunk_errors: number;
  /** Failed attempts by reason, most first. */
  failures: Array<{ outcome: string; count: number }>;
}

/** Every figure of a postmortem, recomputed from the usage rows. */
export interface IncidentNumbers {
  reason: string | null;
  threshold: number | null;
  first_bad_at: string | null;
  /** From the first bad request to the rollback, kill switch or outage start. */
  time_to_mitigation_ms: number | null;
  /** From opening to closing (or now). */
  duration_ms: number;
  before: PeriodNumbers;
  during: PeriodNumbers;
  /** The route's requests from the first bad one to the close (or now) that had a failed (or, for a TTFT rollback, too slow) attempt at the tier. */
  affected_requests: number;
  route_requests: number;
  affected_share: number | null;
  /** Affected requests another tier answered, and those no tier did. */
  failed_over: number;
  failed: number;
  /** What the affected requests cost at the tiers that answered them. */
  affected_cost_usd: number;
  /** Where the affected requests went instead. */
  answered_by: Array<{ tier: string; requests: number }>;
}

/**
 * The numbers behind an incident, from the rows alone. "Bad" requests are the route's requests
 * with a failed attempt at the tier (for a TTFT rollback, also an ok streaming attempt slower
 * than the threshold). `during` runs from the first bad request (looked for up to the rule's
 * window before the incident opened) to its close or `now`; `before` is as long a stretch,
 * or the rule's window, just before it.
 */
export function incidentNumbers(db: Database, incident: IncidentRecord, now: number): IncidentNumbers {
  const reason = typeof incident.trigger.reason === 'string' ? incident.trigger.reason : null;
  const threshold = typeof incident.trigger.threshold === 'number' ? incident.trigger.threshold : null;
  const windowS = typeof incident.trigger.window_s === 'number' ? incident.trigger.window_s : null;
  const lookback = windowS !== null ? windowS * 1000 : DEFAULT_LOOKBACK_MS;
  const end = incident.closedAt ?? now;
  const slowMs = reason === 'ttft_p99' && threshold !== null ? threshold : null;

  const badSql = `r.route = ? AND EXISTS (SELECT 1 FROM attempts a WHERE a.request_seq = r.seq AND a.tier = ? AND
      ((${FAILED_ATTEMPT_SQL}) OR (? IS NOT NULL AND a.outcome = 'ok' AND r.stream = 1 AND a.ms > ?)))`;
  const firstBad = db
    .prepare(`SELECT min(r.started_at) AS at FROM requests r WHERE r.started_at >= ? AND r.started_at <= ? AND ${badSql}`)
    .get(incident.openedAt - lookback, end, incident.route, incident.tier, slowMs, slowMs) as { at: number | null };
  const from = firstBad.at ?? incident.openedAt;

  const affected = db
    .prepare(
      `SELECT r.tier AS tier, count(*) AS requests, total(r.cost_usd) AS cost FROM requests r
     WHERE r.started_at >= ? AND r.started_at <= ? AND ${badSql} GROUP BY r.tier`,
    )
    .all(from, end, incident.route, incident.tier, slowMs, slowMs) as Array<{ tier: string | null; requests: number; cost: number }>;
  const routeRequests = (
    db.prepare('SELECT count(*) AS n FROM requests WHERE route = ? AND started_at >= ? AND started_at <= ?').get(incident.route, from, end) as { n: number }
  ).n;

  const affectedRequests = affected.reduce((n, g) => n + g.requests, 0);
  const failed = affected.filter((g) => g.tier === null).reduce((n, g) => n + g.requests, 0);
  const answeredElsewhere = affected.filter((g) => g.tier !== null && g.tier !== incident.tier);
  const beforeLength = Math.max(lookback, end - from);
  return {
    reason,
    threshold,
    first_bad_at: firstBad.at === null ? null : new Date(firstBad.at).toISOString(),
    time_to_mitigation_ms: firstBad.at === null ? null : incident.openedAt - firstBad.at,
    duration_ms: end - incident.openedAt,
    before: periodNumbers(db, incident, from - beforeLength, from, false),
    during: periodNumbers(db, incident, from, end, true),
    affected_requests: affectedRequests,
    route_requests: routeRequests,
    affected_share: routeRequests === 0 ? null : affectedRequests / routeRequests,
    failed_over: answeredElsewhere.reduce((n, g) => n + g.requests, 0),
    failed,
    affected_cost_usd: affected.reduce((sum, g) => sum + g.cost, 0),
    answered_by: affected
      .filter((g) => g.tier !== null)
      .map((g) => ({ tier: g.tier as string, requests: g.requests }))
      .sort((a, b) => b.requests - a.requests),
  };
}

/** The tier's numbers over [from, to) (or [from, to] for the incident itself, like `usage --since`). */
function periodNumbers(db: Database, incident: IncidentRecord, from: number, to: number, inclusive: boolean): PeriodNumbers {
  const upTo = inclusive ? '<=' : '<';
  const inPeriod = `r.route = ? AND r.started_at >= ? AND r.started_at ${upTo} ?`;
  const ttfts = (
    db
      .prepare(
        `SELECT a.ms AS ms FROM requests r JOIN attempts a ON a.request_seq = r.seq
     WHERE ${inPeriod} AND a.tier = ? AND a.outcome = 'ok' AND r.stream = 1 ORDER BY a.ms`,
      )
      .all(incident.route, from, to, incident.tier) as Array<{ ms: number }>
  ).map((row) => row.ms);
  const counts = db
    .prepare(
      `SELECT total(${COUNTED_ATTEMPT_SQL}) AS attempts, total(${FAILED_ATTEMPT_SQL}) AS failed
     FROM requests r JOIN attempts a ON a.request_seq = r.seq WHERE ${inPeriod} AND a.tier = ?`,
    )
    .get(incident.route, from, to, incident.tier) as { attempts: number; failed: number };
  const failures = db
    .prepare(
      `SELECT a.outcome AS outcome, count(*) AS count FROM requests r JOIN attempts a ON a.request_seq = r.seq
     WHERE ${inPeriod} AND a.tier = ? AND ${FAILED_ATTEMPT_SQL} GROUP BY a.outcome ORDER BY count DESC, outcome`,
    )
    .all(incident.route, from, to, incident.tier) as Array<{ outcome: string; count: number }>;
  const chunkErrors = (
    db.prepare(`SELECT total(r.chunk_errors) AS n FROM requests r WHERE ${inPeriod} AND r.tier = ?`).get(incident.route, from, to, incident.tier) as {
      n: number;
    }
  ).n;
  return {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    ttft_p99_ms: ttfts.length === 0 ? null : round1(percentile(ttfts, 99)),
    ttft_p50_ms: ttfts.length === 0 ? null : round1(percentile(ttfts, 50)),
    ttft_samples: ttfts.length,
    attempts: counts.attempts,
    failed_attempts: counts.failed,
    error_rate: counts.attempts === 0 ? null : counts.failed / counts.attempts,
    chunk_errors: chunkErrors,
    failures,
  };
}
