import { EVENT_BAD_TOOL_CALL, type EventFacts } from '../protocols/core/event-facts.js';
import { AttemptError } from './attempt-error.js';

/** A stream event can not sensibly be larger: past this, the upstream is not speaking its protocol. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** An upstream answer can not sensibly be larger (a whole body, or all of a stream's events): past this it counts as broken. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export function answerTooLarge(): AttemptError {
  return new AttemptError('answer_too_large', `upstream answer too large: more than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`, {
    phase: 'body',
    failover: true,
    retryable: false,
  });
}

/** One event over its cap: the answer is too large, as a whole one over its cap is (the connection did not break). */
export function tooLargeEvent(): AttemptError {
  return new AttemptError('answer_too_large', `upstream answer too large: a stream event larger than ${MAX_EVENT_BYTES / 1024 / 1024} MiB`, {
    phase: 'body',
    failover: true,
    retryable: false,
  });
}

/** The stream ended (or sent its terminator) before its first content event: the tier's fault. */
export function emptyStream(): AttemptError {
  return new AttemptError('empty_stream', 'the stream ended before its first content event', { phase: 'first_token', failover: true, retryable: false });
}

/** The upstream reported an error inside the stream before any content (or its reader found a bad tool call in it): the next tier may answer. */
export function upstreamErrorBeforeContent(data: string, facts: EventFacts): AttemptError {
  if (facts.flags & EVENT_BAD_TOOL_CALL) {
    const error = facts.parts.find((part) => part.type === 'error');
    return badToolCall(error?.type === 'error' ? error.message : 'a tool call written as text that cannot be run');
  }
  return new AttemptError('upstream_error', `error event before first token: ${data.slice(0, 200)}`, {
    phase: 'first_token',
    failover: true,
    retryable: false,
  });
}

/**
 * A tool call the model wrote as text that the client cannot run (an unknown tool, arguments
 * invalid after repair, a form that never closed within ttft_ms): the tier's fault, not its
 * provider's health; the next tier gets the same payload (docs/tool-text.md).
 */
export function badToolCall(message: string): AttemptError {
  return new AttemptError('bad_tool_call', `bad tool call written as text: ${message}`, {
    phase: 'first_token',
    failover: true,
    retryable: false,
    blame: 'tier',
  });
}

// ─── after commit: the stream's one error event, no failover ────────────────

/** The upstream reported an error inside a stream already committed. */
export function upstreamErrorAfterContent(): AttemptError {
  return new AttemptError('upstream_error', 'the upstream reported an error after the first token', { phase: 'body', failover: false, retryable: false });
}

/**
 * A committed stream's upstream broke. An answer over a size cap came over a sound connection: it
 * keeps its own reason and words (and no break a resume could mend).
 */
export function brokenAfterContent(err: AttemptError): AttemptError {
  const tooLarge = err.reason === 'answer_too_large';
  const message = tooLarge ? `${err.message}, after the first token` : `upstream connection broke after the first token: ${err.message}`;
  return new AttemptError(tooLarge ? 'answer_too_large' : 'broken_stream', message, { phase: 'body', failover: false, retryable: false });
}

/** The upstream closed a committed stream with neither a finish nor its terminator. */
export function unfinishedStream(): AttemptError {
  return new AttemptError('broken_stream', 'upstream ended the stream without finishing it', { phase: 'body', failover: false, retryable: false });
}

/** The tier's opt-in stream_max_ms ran out: the operator's cap, not the tier's failing, so it says nothing about the tier's health. */
export function streamCapReached(capMs: number): AttemptError {
  return new AttemptError('total_timeout', `stream not complete within stream_max_ms (${capMs} ms)`, {
    phase: 'total',
    failover: false,
    retryable: false,
    timedOut: true,
    blame: null,
  });
}
