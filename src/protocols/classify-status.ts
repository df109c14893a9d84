import type { ErrorWords } from './error-words.js';
import type { StatusVerdict } from './types.js';

const CONTEXT_LENGTH =
  /context[_ ]length|maximum context|context window|prompt is too long|input is too long|too many (input )?tokens|reduce the length|exceeds the (model'?s? )?(max|maximum|limit)/i;
const CONTENT_POLICY = /content[_ ]policy|content[_ ]filter|safety system|flagged/i;

/**
 * Whose fault a non-2xx answer is, whatever the protocol: the tier's (fail over, maybe retry)
 * or the payload's (the client gets the upstream's error). Only the error's own words are
 * matched, never the whole body.
 */
export function classifyStatus(status: number, words: ErrorWords): StatusVerdict {
  const message = words.message ?? `HTTP ${status}`;
  const said = `${message} ${words.code ?? ''}`;
  if (status === 429) return { reason: 'rate_limited', failover: true, retryable: true, message };
  // 529: Anthropic's "overloaded".
  if (status === 500 || status === 502 || status === 503 || status === 504 || status === 529) {
    return { reason: 'server_error', failover: true, retryable: true, message };
  }
  if (status >= 500) return { reason: 'server_error', failover: true, retryable: false, message };
  if (status === 408 || status === 409) return { reason: 'timeout_or_conflict', failover: true, retryable: false, message };
  if (status === 401 || status === 403) return { reason: 'auth', failover: true, retryable: false, message };
  if (status === 404) return { reason: 'model_not_found', failover: true, retryable: false, message };
  if ((status === 400 || status === 413) && CONTEXT_LENGTH.test(said)) {
    return { reason: 'context_length', failover: true, retryable: false, message };
  }
  if (status === 400 || status === 413 || status === 422) {
    const reason = CONTENT_POLICY.test(said) ? 'content_policy' : 'bad_request';
    return { reason, failover: false, retryable: false, message };
  }
  // 405, 410, 415, ...: a wrong base URL or model on that tier, not something the payload did.
  return { reason: 'client_error', failover: true, retryable: false, message };
}
