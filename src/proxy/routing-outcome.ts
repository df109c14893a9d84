import type { Tier } from '../config/schema.js';
import type { ShapedAnswer, UpstreamCall } from '../protocols/call.js';
import type { AttemptRecord } from '../telemetry/events.js';
import type { AttemptError } from './attempt-error.js';
import type { HedgeEnd } from './hedging/race.js';
import type { NoAnswer } from './no-answer.js';
import type { StreamResume } from './resume/stream-resume.js';
import type { StreamRelay } from './stream-relay.js';
import type { UnaryAnswer } from './unary-attempt.js';

/** How the routing loop ended for one request: the answer its client gets is written from this (answer-request.ts). */
export type RoutingOutcome =
  | { kind: 'stream'; tier: Tier; call: UpstreamCall; relay: StreamRelay; attempts: AttemptRecord[]; resume: StreamResume | null; hedge?: HedgeEnd }
  | { kind: 'unary'; tier: Tier; call: UpstreamCall; answer: UnaryAnswer; attempts: AttemptRecord[] }
  /** The payload's fault: the upstream's own error goes to the client. */
  | { kind: 'rejected'; tier: Tier; answer: ShapedAnswer; error: AttemptError; attempts: AttemptRecord[] }
  /** No tier answered (no-answer.ts says how). */
  | NoAnswer
  /** The client left, or the server is stopping. `tier`: the one whose attempt was in flight then. */
  | { kind: 'aborted'; attempts: AttemptRecord[]; tier?: Tier };
