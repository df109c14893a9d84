import type { IncidentRecord } from './incident-rows.js';
import type { IncidentNumbers } from './postmortem.js';

/** One entry of `incidents --json` (docs/usage.md); `trigger` holds the numbers, recomputed from the rows. */
export function incidentJson(incident: IncidentRecord, n: IncidentNumbers): Record<string, unknown> {
  return {
    id: incident.id,
    route: incident.route,
    tier: incident.tier,
    kind: incident.kind,
    opened_at: new Date(incident.openedAt).toISOString(),
    closed_at: incident.closedAt === null ? null : new Date(incident.closedAt).toISOString(),
    trigger: {
      reason: n.reason,
      threshold: n.threshold,
      ...(incident.kind === 'alert' ? { alert: incident.trigger.alert ?? null } : {}),
      first_bad_at: n.first_bad_at,
      time_to_mitigation_ms: n.time_to_mitigation_ms,
      ttft_p99_before_ms: n.before.ttft_p99_ms,
      ttft_p99_during_ms: n.during.ttft_p99_ms,
      error_rate_before: n.before.error_rate,
      error_rate_during: n.during.error_rate,
      chunk_errors_before: n.before.chunk_errors,
      chunk_errors_during: n.during.chunk_errors,
    },
    affected_requests: n.affected_requests,
    route_requests: n.route_requests,
  };
}
