import type { Database } from 'better-sqlite3';
import { rangeWhere, type UsageRange, type UsageReport, usageReport } from './usage-report.js';

/** Why requests fell back: the failed attempts of requests that tried more than one tier, by tier and outcome. */
export interface FallbackReason {
  route: string;
  tier: string;
  outcome: string;
  count: number;
}

/** One run of llm-route (an `exec`) as its usage rows tell it: what `exec` says when its command exits. */
export interface RunSummary {
  /** `usage --by tier` over the same rows: the same numbers `llm-route usage --since … --run …` prints. */
  report: UsageReport;
  fallbackReasons: FallbackReason[];
  /** Tool calls the model wrote as text that reached the client as tool calls. */
  toolCallsRecovered: number;
}

/** The run's rows in [since, until] (with `run`, one process's only), read from the usage log. */
export function runSummary(db: Database, range: UsageRange): RunSummary {
  const report = usageReport(db, { ...range, by: 'tier' });
  const { sql, params } = rangeWhere(range, 'r');
  const fallbackReasons = db
    .prepare(
      `SELECT r.route AS route, a.tier AS tier, a.outcome AS outcome, count(*) AS count
       FROM requests r JOIN attempts a ON a.request_seq = r.seq
       WHERE ${sql} AND r.failover = 1 AND a.outcome != 'ok' GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3`,
    )
    .all(...params) as FallbackReason[];
  const recovered = db
    .prepare(
      `SELECT total(json_extract(r.tool_text, '$.calls')) AS calls FROM requests r
       WHERE ${sql} AND json_extract(r.tool_text, '$.result') IN ('recovered', 'repaired')`,
    )
    .get(...params) as { calls: number };
  return { report, fallbackReasons, toolCallsRecovered: recovered.calls };
}
