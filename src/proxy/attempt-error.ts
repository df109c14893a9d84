import type { StatusVerdict, UpstreamAnswer } from '../protocols/core/types.js';
import type { AttemptReason, Blame } from '../telemetry/events.js';
import { networkFailure } from '../util/network-error.js';

export type Phase = 'connect' | 'headers' | 'first_token' | 'body' | 'idle' | 'total';

interface AttemptErrorInit {
  phase: Phase;
  failover: boolean;
  retryable: boolean;
  timedOut?: boolean;
  status?: number;
  retryAfterMs?: number;
  upstream?: UpstreamAnswer;
  /** Default: the payload's when there is no failover, else the provider's while connecting, else the tier's. */
  blame?: Blame;
}

/**
 * Why one upstream attempt did not produce an answer. The verdict (fail over? retry?) is
 * decided here, where the error is made; the routing loop reads only the verdict.
 */
export class AttemptError extends Error {
  readonly reason: AttemptReason;
  readonly phase: Phase;
  /** The tier's fault: the next tier may be tried. false: the payload's fault. */
  readonly failover: boolean;
  readonly retryable: boolean;
  /** Timed out: never retried on the same tier. */
  readonly timedOut: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly upstream: UpstreamAnswer | undefined;
  /** Whose health this failure counts against, decided here where it is made. */
  readonly blame: Blame;

  constructor(reason: AttemptReason, message: string, init: AttemptErrorInit) {
    super(message);
    this.name = 'AttemptError';
    this.reason = reason;
    this.phase = init.phase;
    this.failover = init.failover;
    this.retryable = init.retryable;
    this.timedOut = init.timedOut ?? false;
    this.status = init.status;
    this.retryAfterMs = init.retryAfterMs;
    this.upstream = init.upstream;
    this.blame = init.blame !== undefined ? init.blame : !init.failover ? 'payload' : init.phase === 'connect' ? 'provider' : 'tier';
  }
}

export function timeoutError(
  reason: 'connect_timeout' | 'ttft_timeout' | 'total_timeout' | 'idle_timeout' | 'deadline',
  ms: number,
  phase: Phase,
): AttemptError {
  // A stream's silence is measured in content (keep-alives are not progress), a whole answer's in bytes.
  const what = {
    connect_timeout: 'no connection',
    ttft_timeout: 'no first token',
    total_timeout: 'no complete answer',
    idle_timeout: phase === 'idle' ? 'no content' : 'no bytes',
    deadline: 'route deadline reached, no first token',
  }[reason];
  // The route's deadline cut the attempt short: the budget ran out, not the tier.
  const blame = reason === 'deadline' ? null : undefined;
  return new AttemptError(reason, `${what} within ${ms} ms`, { phase, failover: true, retryable: false, timedOut: true, blame });
}

export function statusError(verdict: StatusVerdict, answer: UpstreamAnswer): AttemptError {
  return new AttemptError(verdict.reason, `HTTP ${answer.status}: ${verdict.message}`, {
    phase: 'headers',
    failover: verdict.failover,
    retryable: verdict.retryable,
    status: answer.status,
    retryAfterMs: verdict.retryAfterMs ?? parseRetryAfter(answer.headers['retry-after']),
    upstream: answer,
    // An input this server cannot take says nothing about its health.
    blame: verdict.healthNeutral ? null : undefined,
  });
}

/** Maps a socket-level failure from undici or node:net. */
export function transportError(err: unknown, phase: Phase): AttemptError {
  const { code, kind } = networkFailure(err);
  if (kind === 'connection_refused') {
    return new AttemptError('connection_refused', 'connection refused', { phase: 'connect', failover: true, retryable: false });
  }
  if (kind === 'connect_timeout') {
    return new AttemptError('connect_timeout', 'connect timed out', { phase: 'connect', failover: true, retryable: false, timedOut: true });
  }
  if (kind === 'unreachable') {
    return new AttemptError('unreachable', `host unreachable (${code})`, { phase: 'connect', failover: true, retryable: false });
  }
  const detail = code ?? (err instanceof Error ? err.message : String(err));
  // A reset, or a socket the other side closed mid-answer: worth one more try.
  if (kind === 'connection_reset') {
    return new AttemptError('connection_reset', `connection broken (${detail})`, { phase, failover: true, retryable: true, blame: 'provider' });
  }
  // TLS failures, bad header values, a closed pool: trying again will not help; the next tier may.
  return new AttemptError('transport_error', `request failed (${detail})`, { phase, failover: true, retryable: false });
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  const seconds = Number(text);
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000));
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
