import { AttemptError } from './attempt-error.js';

/** An SSE event can not sensibly be larger: past this, the upstream is not speaking SSE. */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

export function tooLargeEvent(): AttemptError {
  return new AttemptError('broken_stream', `upstream sent an SSE event larger than ${MAX_EVENT_BYTES} bytes`, { phase: 'body', failover: true, retryable: false });
}

/** The stream ended (or said [DONE]) before its first content event: the tier's fault. */
export function emptyStream(): AttemptError {
  return new AttemptError('empty_stream', 'the stream ended before its first content event', { phase: 'first_token', failover: true, retryable: false });
}

/** The one SSE event a client gets when a committed stream cannot go on. */
export function streamErrorEvent(message: string): Buffer {
  const payload = { error: { message: `llm-route: ${message}`, type: 'upstream_error', code: 'stream_interrupted' } };
  return Buffer.from(`data: ${JSON.stringify(payload)}\n\n`);
}
