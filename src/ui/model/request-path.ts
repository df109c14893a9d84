import { toolTextSummary } from '../../protocols/tool-text/scope.js';
import type { AttemptRecord, RequestFinished } from '../../telemetry/events.js';
import type { RecentRequest } from '../dashboard-view.js';
import { formatCount, formatMs } from '../../util/format.js';

const OK = '✓';
const FAILED = '✗';

/** Failure reasons a person reads faster as a word than as an HTTP status. */
const REASON_LABELS: Record<string, string> = {
  connection_refused: 'refused',
  connection_reset: 'reset',
  unreachable: 'unreachable',
  idle_timeout: 'stalled',
  broken_stream: 'broken',
  empty_stream: 'empty',
  upstream_error: 'error event',
  bad_response: 'bad response',
  bad_tool_call: 'bad tool call',
  context_length: 'too long',
  model_not_found: 'no model',
  auth: 'auth',
  deadline: 'deadline',
};

/** Timeouts, labelled with the time the attempt took: `ttft 2.5s`. */
const TIMEOUT_LABELS: Record<string, string> = {
  ttft_timeout: 'ttft',
  connect_timeout: 'connect',
  total_timeout: 'total',
};

/** A short label for why one attempt failed: `ttft 2.5s`, `503`, `refused`, `reset`, `stalled`. */
export function attemptLabel(record: AttemptRecord): string {
  const timeout = TIMEOUT_LABELS[record.outcome];
  if (timeout) return `${timeout} ${formatMs(record.ms)}`;
  const word = REASON_LABELS[record.outcome];
  if (word && record.outcome === 'model_not_found' && record.status) return `${record.status} ${word}`;
  if (word) return word;
  if (record.status) return String(record.status);
  return record.outcome.replaceAll('_', ' ');
}

/**
 * The way a request took through its tiers: `local ✗ ttft 2.5s → cloud ✓`.
 * Same-tier retries that failed alike collapse: `local ✗ 503 ×2 → cloud ✓`.
 */
export function requestPath(attempts: readonly AttemptRecord[]): string {
  const steps: { text: string; times: number }[] = [];
  for (const record of attempts) {
    const text = record.outcome === 'ok' ? `${record.tier} ${OK}` : `${record.tier} ${FAILED} ${attemptLabel(record)}`;
    const last = steps[steps.length - 1];
    if (last && last.text === text) last.times++;
    else steps.push({ text, times: 1 });
  }
  return steps.map((s) => (s.times > 1 ? `${s.text} ×${s.times}` : s.text)).join(' → ');
}

/** A finished request as a row of the recent list: its path through the tiers and what happened on the way. */
export function recentRequest(at: number, event: RequestFinished): RecentRequest {
  return {
    at,
    route: event.route,
    protocol: event.protocol,
    path: event.attempts.length > 0 ? requestPath(event.attempts) : (event.error ?? ''),
    status: event.status,
    outcome: event.outcome,
    ttftMs: event.ttftMs,
    completionTokens: event.embeddings ? undefined : event.usage?.completion_tokens,
    ...(event.resumed ? { resumed: resumedNote(event.resumed) } : {}),
    ...(event.toolText?.length ? { toolText: toolTextNote(event.toolText) } : {}),
    ...(event.hedged ? { hedged: `hedged at ${event.hedged.at_ms} ms: ${event.hedged.winner} won, ${event.hedged.loser} stopped` } : {}),
    ...(event.rule !== undefined ? { rule: event.rule } : {}),
    ...(event.embeddings ? { embeddings: embeddingsNote(event) } : {}),
  };
}

function embeddingsNote(event: RequestFinished): string {
  const { inputs, width, cut } = event.embeddings ?? { inputs: 0 };
  const parts = [`embeddings ${formatCount(inputs)} input${inputs === 1 ? '' : 's'}`];
  if (width !== undefined) parts.push(`${width}-d`);
  if (event.usage) parts.push(`${formatCount(event.usage.prompt_tokens)} tokens`);
  if (cut) parts.push(`${cut} cut to fit`);
  return parts.join(' ');
}

function toolTextNote(reports: NonNullable<RequestFinished['toolText']>): string {
  const { format, result } = toolTextSummary(reports);
  return `tool text ${format} ${result.replaceAll('_', ' ')}`;
}

/** What ended the stream a resume took on, as the recent list says it. */
const RESUMED_AFTER: Record<NonNullable<RequestFinished['resumed']>['why'], string> = {
  stall_learned: 'a learned stall',
  idle: 'idle_ms',
  break: 'a break',
};

function resumedNote(resumed: NonNullable<RequestFinished['resumed']>): string {
  const after = `after ${RESUMED_AFTER[resumed.why]}`;
  return resumed.result === 'ok' ? `resumed ${resumed.from}→${resumed.to} by ${resumed.how} ${after}` : `resume ${resumed.result} ${after}`;
}
