import { formatDuration } from '../../util/format.js';
import { formatUsd } from '../text-table.js';
import type { IncidentRecord } from './incident-rows.js';
import type { IncidentNumbers } from './postmortem.js';

const KIND_TITLE = { rollback: 'automated rollback', alert: 'kill switch by alert', down: 'tier down' } as const;

/** What a failure reason usually means, and what prevents it; the words of seed 004's guide. */
const REMEDY: Record<string, string> = {
  ttft_timeout:
    "no first token came within ttft_ms (a stalled prefill queue or a cold model): keep ttft_ms at what users tolerate so the fallback answers instead, warm the model (health.warmup), and cap the tier's concurrency so its queue cannot outgrow its prefill",
  server_error: 'the upstream answered 5xx: put limits (rpm / tpm / concurrency) in front of it and keep the fallback tier warm',
  rate_limited: "the upstream rate-limited llm-route (429): set limits.rpm / limits.tpm at or below the provider's quota",
  connection_refused:
    "nothing listened at the tier's address: add health.interval_ms so the tier is marked down before requests find out, and `start:` for a local server",
  connection_reset: 'the upstream dropped connections: check its process and memory (VRAM) and add health checks',
  connect_timeout: 'connections to the tier timed out: check the network path and add health checks',
  idle_timeout: "streams stalled mid-answer: lower idle_ms so broken streams end sooner, and reduce the tier's batch size",
  broken_stream: 'streams broke: the upstream cuts connections under load (VRAM, aggressive TCP timeouts); cap its concurrency',
  bad_tool_call:
    'the local model wrote tool calls as text that could not be run (an unknown tool, arguments invalid after repair): a larger model, or its own tool template (Ollama: a model with tools support), writes them better',
  empty_stream: 'streams ended before their first token: the upstream cuts connections under load; cap its concurrency',
  unreachable: "the tier's host was unreachable: check the network path and add health checks",
  model_not_found: "the model was not present on the tier (404): pull it, or fix the tier's `model`",
  auth: "the tier rejected its key (401/403): rotate the provider's api_key",
  context_length: "prompts were too long for the tier's model: route long prompts elsewhere or raise its context (num_ctx)",
};

/** `incidents show ID`: a postmortem draft in the format of seed 004 (root cause, impact, preventive actions). */
export function renderPostmortem(incident: IncidentRecord, n: IncidentNumbers): string {
  const closed = incident.closedAt === null ? 'still open' : `closed ${iso(incident.closedAt)}${incident.closedBy ? ` (${incident.closedBy})` : ''}`;
  const lines = [
    `Incident #${incident.id}: ${KIND_TITLE[incident.kind]} of tier "${incident.tier}" in route "${incident.route}"`,
    `Opened ${iso(incident.openedAt)}, ${closed}; lasted ${formatDuration(n.duration_ms)}.`,
    `Every figure below is recomputed from the usage log (requests and attempts), not from counters.`,
    '',
    'Root cause',
    ...rootCause(incident, n).map((line) => `  ${line}`),
    '',
    'Impact',
    ...impact(incident, n).map((line) => `  ${line}`),
    '',
    'Preventive actions',
    ...preventiveActions(incident, n).map((line) => `  - ${line}`),
  ];
  return lines.join('\n');
}

function rootCause(incident: IncidentRecord, n: IncidentNumbers): string[] {
  const { before, during } = n;
  const tripped = triggerText(incident, n);
  const lines = [tripped];
  lines.push(
    `TTFT p99 of "${incident.tier}" (its own, attempt start to first token): ${ms(before.ttft_p99_ms)} before (${plural(before.ttft_samples, 'stream')}) vs ${ms(during.ttft_p99_ms)} during (${plural(during.ttft_samples, 'stream')}); p50 ${ms(before.ttft_p50_ms)} vs ${ms(during.ttft_p50_ms)}.`,
  );
  lines.push(
    `Error rate: ${pct(before.error_rate)} before (${before.failed_attempts} of ${before.attempts} attempts) vs ${pct(during.error_rate)} during (${during.failed_attempts} of ${during.attempts}).`,
  );
  if (during.failures.length > 0) lines.push(`Failed attempts during: ${during.failures.map((f) => `${f.outcome} ${f.count}`).join(', ')}.`);
  lines.push(`Malformed or truncated chunks in its streams: ${before.chunk_errors} before vs ${during.chunk_errors} during.`);
  lines.push(`Before = ${before.from} .. ${before.to}; during = ${during.from} .. ${during.to}.`);
  return lines;
}

function triggerText(incident: IncidentRecord, n: IncidentNumbers): string {
  if (incident.kind === 'rollback') {
    const rule = n.reason === 'ttft_p99' ? `TTFT p99 above ${n.threshold} ms` : `error rate above ${pct(n.threshold)}`;
    return `The rollback rule of "${incident.tier}" tripped (${rule}) and set its weight to 0.`;
  }
  if (incident.kind === 'alert') return `An alert held the weight of "${incident.tier}" at 0 (${String(incident.trigger.alert ?? 'alert firing')}).`;
  return `The circuit of "${incident.tier}" opened and stayed open for over 30 s (${String(incident.trigger.reason ?? 'down')}).`;
}

function impact(incident: IncidentRecord, n: IncidentNumbers): string[] {
  const lines = [
    `${n.affected_requests} of ${n.route_requests} requests of route "${incident.route}" (${pct(n.affected_share)}) were affected from the first bad request to the ${incident.closedAt === null ? 'present' : 'close'}: ${n.failed_over} failed over, ${n.failed} got an error.`,
  ];
  if (n.answered_by.length > 0) {
    const where = n.answered_by.map((a) => `${a.tier} ${a.requests}${a.tier === incident.tier ? ' (late or after a retry)' : ''}`).join(', ');
    lines.push(`Answered by: ${where}; they cost ${formatUsd(n.affected_cost_usd)}.`);
  }
  if (n.first_bad_at !== null && n.time_to_mitigation_ms !== null) {
    const what = incident.kind === 'rollback' ? 'the rollback' : incident.kind === 'alert' ? 'the kill switch' : 'the tier being marked down';
    lines.push(`First bad request at ${n.first_bad_at}; ${(n.time_to_mitigation_ms / 1000).toFixed(1)} s until ${what}.`);
  } else {
    lines.push('No failed request at this tier was found in the log around the incident.');
  }
  return lines;
}

/** Drawn from the numbers: each action names the figure that calls for it. */
export function preventiveActions(incident: IncidentRecord, n: IncidentNumbers): string[] {
  const actions: string[] = [];
  const { before, during } = n;
  const rose = during.ttft_p99_ms !== null && before.ttft_p99_ms !== null && during.ttft_p99_ms > 2 * before.ttft_p99_ms;
  if (during.ttft_p99_ms !== null && (rose || n.reason === 'ttft_p99')) {
    const from = before.ttft_p99_ms === null ? '' : ` from ${ms(before.ttft_p99_ms)}`;
    const rule =
      n.reason === 'ttft_p99' && n.threshold !== null
        ? ` against a ${n.threshold} ms rule`
        : before.ttft_p99_ms === null
          ? ''
          : `; add rollback.ttft_p99_ms near ${Math.round(before.ttft_p99_ms * 2)} ms so it is cut sooner`;
    actions.push(
      `Its own TTFT p99 went${from} to ${ms(during.ttft_p99_ms)}${rule}: its prefill queue is too long for this load; cap its concurrency (limits.concurrency / tpm) or keep it at a canary weight until its p99 holds.`,
    );
  }
  const top = during.failures[0];
  if (top && during.error_rate !== null && during.error_rate > 0.01) {
    actions.push(
      `${top.outcome} caused ${top.count} of ${during.failed_attempts} failures: ${REMEDY[top.outcome] ?? "investigate the tier's logs for this reason"}.`,
    );
  }
  if (during.chunk_errors > 0) {
    actions.push(
      `${during.chunk_errors} malformed or truncated chunks: the upstream cut streams mid-answer; lower the tier's idle_ms so broken streams end fast, and check its memory under batching.`,
    );
  }
  if (n.time_to_mitigation_ms !== null && n.time_to_mitigation_ms > 30_000 && incident.kind === 'rollback') {
    actions.push(
      `The rollback came ${(n.time_to_mitigation_ms / 1000).toFixed(0)} s after the first bad request: lower rollback.window_s or min_requests so it trips sooner.`,
    );
  }
  if (n.affected_share !== null && n.affected_share > 0.05) {
    actions.push(
      `${pct(n.affected_share)} of the route was affected: roll the tier out as a canary (weight 5 → 25 → 50 → 100) so a bad rollout touches a small share.`,
    );
  }
  if (n.failed > 0)
    actions.push(`${n.failed} requests got an error: add a fallback tier after "${incident.tier}" or raise the route's deadline_ms so failover has time.`);
  if (actions.length === 0) actions.push('The numbers show no lasting damage: keep the rule as it is and review its thresholds at the next incident.');
  return actions;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function iso(at: number): string {
  return new Date(at).toISOString();
}

function ms(value: number | null): string {
  return value === null ? 'n/a' : `${Math.round(value)} ms`;
}

function pct(value: number | null): string {
  return value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`;
}
