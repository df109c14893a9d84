import type { AttemptOutcome, RequestFinished } from '../telemetry/events.js';

/** The fields of a finished request the usage log keeps (the rest of the event is not needed). */
export type LoggedRequest = Pick<
  RequestFinished,
  'id' | 'startedAt' | 'protocol' | 'route' | 'tier' | 'provider' | 'model' | 'status' | 'outcome' | 'stream' | 'ttftMs'
  | 'durationMs' | 'usage' | 'chunkErrors' | 'attempts' | 'savers' | 'estimate' | 'resumed' | 'promptTruncated'
>;

/**
 * Finished requests cross to the usage thread as one flat array of primitives: cloning that
 * costs a third of cloning the event objects, and it is the only part paid on the main thread.
 */
export function packRequest(e: LoggedRequest, out: unknown[]): void {
  out.push(e.id, e.startedAt, e.protocol, e.route, e.tier, e.provider, e.model, e.status, e.outcome, e.stream, e.ttftMs ?? null, e.durationMs, e.chunkErrors);
  const usage = e.usage;
  if (usage) out.push(1, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens ?? 0, usage.cache_creation_tokens ?? 0);
  else out.push(0);
  out.push(e.attempts.length);
  for (const a of e.attempts) out.push(a.tier, a.attempt, a.outcome, a.status ?? null, a.ms);
  const savers = e.savers ?? [];
  out.push(savers.length);
  for (const s of savers) out.push(s.saver, s.before, s.after, s.failed === true);
  if (e.estimate) out.push(1, e.estimate.promptText, e.estimate.completionText);
  else out.push(0);
  const resumed = e.resumed;
  if (resumed) out.push(1, resumed.from, resumed.to, resumed.how, resumed.at_chars, resumed.result);
  else out.push(0);
  if (e.promptTruncated) out.push(1, e.promptTruncated.sent, e.promptTruncated.read);
  else out.push(0);
}

/** The inverse of packRequest over a whole batch. */
export function unpackRequests(flat: readonly unknown[]): LoggedRequest[] {
  const out: LoggedRequest[] = [];
  let i = 0;
  const next = (): unknown => flat[i++];
  while (i < flat.length) {
    const e = {
      id: next(), startedAt: next(), protocol: next(), route: next(), tier: next(), provider: next(), model: next(),
      status: next(), outcome: next(), stream: next(), ttftMs: next() ?? undefined, durationMs: next(), chunkErrors: next(),
    } as LoggedRequest;
    if (next() === 1) {
      e.usage = { prompt_tokens: next() as number, completion_tokens: next() as number, cached_tokens: next() as number, cache_creation_tokens: next() as number };
    }
    const attempts = next() as number;
    e.attempts = [];
    for (let a = 0; a < attempts; a++) {
      const record = { tier: next() as string, attempt: next() as number, outcome: next() as AttemptOutcome, status: next() as number | null, ms: next() as number };
      e.attempts.push(record.status === null ? { tier: record.tier, attempt: record.attempt, outcome: record.outcome, ms: record.ms } : (record as { tier: string; attempt: number; outcome: AttemptOutcome; status: number; ms: number }));
    }
    const savers = next() as number;
    if (savers > 0) {
      e.savers = [];
      for (let s = 0; s < savers; s++) {
        const saver = next() as string;
        const before = next() as number;
        const after = next() as number;
        const failed = next() === true;
        e.savers.push(failed ? { saver, before, after, failed } : { saver, before, after });
      }
    }
    if (next() === 1) e.estimate = { promptText: next() as string, completionText: next() as string };
    if (next() === 1) {
      e.resumed = { from: next() as string, to: next() as string, how: next() as 'replay' | 'continue', at_chars: next() as number, result: next() as 'ok' | 'diverged' | 'failed' };
    }
    if (next() === 1) e.promptTruncated = { sent: next() as number, read: next() as number };
    out.push(e);
  }
  return out;
}
