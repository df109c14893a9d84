import type { IncomingHttpHeaders } from 'node:http';
import { errorWords } from './error-words.js';
import { classifyRejection } from './rejections.js';
import type { StatusVerdict } from '../core/types.js';

/**
 * Whose fault a non-2xx answer is, whatever the protocol: the tier's (fail over, maybe retry)
 * or the payload's (the client gets the upstream's error). Only the error's own words are
 * read, never the whole body.
 */
export function classifyStatus(status: number, body: string, _headers?: IncomingHttpHeaders): StatusVerdict {
  const words = errorWords(status, body);
  const message = words.message ?? `HTTP ${status}`;
  if (status === 429) return { reason: 'rate_limited', failover: true, retryable: true, message };
  const rejection = classifyRejection(words);
  // Another tier may have the bigger context, or take this input; this one will not on a
  // retry (500s included), and neither says anything about its health.
  if (rejection === 'context_length') return { reason: 'context_length', failover: true, retryable: false, message, healthNeutral: true };
  if (rejection === 'unsupported_input') return { reason: 'unsupported', failover: true, retryable: false, message, healthNeutral: true };
  // 529: Anthropic's "overloaded".
  if (status === 500 || status === 502 || status === 503 || status === 504 || status === 529) {
    return { reason: 'server_error', failover: true, retryable: true, message };
  }
  if (status >= 500) return { reason: 'server_error', failover: true, retryable: false, message };
  if (status === 408 || status === 409) return { reason: 'timeout_or_conflict', failover: true, retryable: false, message };
  if (status === 401 || status === 403) return { reason: 'auth', failover: true, retryable: false, message };
  if (status === 404) return { reason: 'model_not_found', failover: true, retryable: false, message };
  if (status === 400 || status === 413 || status === 422) {
    return { reason: rejection === 'content_policy' ? 'content_policy' : 'bad_request', failover: false, retryable: false, message };
  }
  // 405, 410, 415, ...: a wrong base URL or model on that tier, not something the payload did.
  return { reason: 'client_error', failover: true, retryable: false, message };
}
