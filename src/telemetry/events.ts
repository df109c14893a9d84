import type { Usage } from '../providers/types.js';

/**
 * Everything the UI, metrics, health and the request log learn about requests leaves the
 * request path as one of these events. Nothing on the path calls into a subscriber directly.
 */

/** One upstream try, as the request log and the 502 body list it. */
export interface AttemptRecord {
  tier: string;
  attempt: number;
  /** "ok" or the failure reason (connection_refused, ttft_timeout, rate_limited, ...). */
  outcome: string;
  status?: number;
  ms: number;
  message?: string;
}

export type RequestOutcome =
  | 'ok' // answered (stream finished cleanly, or a whole response)
  | 'interrupted' // committed stream ended by an upstream stall or break
  | 'upstream_rejected' // the payload's fault; the upstream's error was passed on
  | 'failed' // every tier failed
  | 'timeout' // every tier timed out, or the route's deadline passed
  | 'client_abort' // the client went away first
  | 'bad_request'; // rejected by llm-route before routing

export interface RequestStarted {
  type: 'request_start';
  id: string;
  route: string;
  stream: boolean;
}

export interface AttemptFinished {
  type: 'attempt_end';
  id: string;
  route: string;
  tier: string;
  provider: string;
  record: AttemptRecord;
  /**
   * Whose fault a failure was: `provider` (socket-level: counts against every tier of the
   * provider), `tier` (model-level: 404, context length, TTFT), `payload` (the request's own
   * fault; says nothing about health); null on success.
   */
  blame: 'provider' | 'tier' | 'payload' | null;
}

export interface FailedOver {
  type: 'failover';
  id: string;
  route: string;
  fromTier: string;
  reason: string;
}

export interface StreamCommitted {
  type: 'commit';
  id: string;
  route: string;
  tier: string;
  ttftMs: number;
}

export interface ChunkDropped {
  type: 'chunk_error';
  route: string;
  tier: string;
}

export interface RequestFinished {
  type: 'request_end';
  id: string;
  route: string;
  /** The tier that answered; null when none did. */
  tier: string | null;
  status: number;
  outcome: RequestOutcome;
  stream: boolean;
  /** True when a stream was committed (it was counted as active). */
  committed: boolean;
  attempts: AttemptRecord[];
  ttftMs?: number;
  durationMs: number;
  usage?: Usage;
  chunkErrors: number;
  error?: string;
}

export type TelemetryEvent = RequestStarted | AttemptFinished | FailedOver | StreamCommitted | ChunkDropped | RequestFinished;
