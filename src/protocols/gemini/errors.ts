import type { IncomingHttpHeaders } from 'node:http';
import { errorText } from '../../util/error-text.js';
import { isRecord } from '../../util/is-record.js';
import { classifyStatus } from '../errors/classify-status.js';
import { classifyRejection } from '../errors/rejections.js';
import type { StatusVerdict } from '../core/types.js';

/**
 * Google's errors: `{"error":{"code":400,"message":…,"status":"INVALID_ARGUMENT","details":[…]}}`
 * (in an array when the answer was to be a JSON array). The status word and the details say
 * more than the HTTP status: a 400 is also how Google refuses a key or a prompt too long.
 */
export interface GoogleError {
  code?: number;
  message?: string;
  /** `INVALID_ARGUMENT`, `UNAUTHENTICATED`, `RESOURCE_EXHAUSTED`, … */
  status?: string;
  details: readonly unknown[];
}

/** The error object of a Google error body (or of its parsed JSON); undefined when it is not one. */
export function googleError(body: unknown): GoogleError | undefined {
  let value = body;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (Array.isArray(value)) value = value[0];
  const error = isRecord(value) ? value.error : undefined;
  if (!isRecord(error)) return undefined;
  const found: GoogleError = { details: Array.isArray(error.details) ? error.details : [] };
  if (typeof error.code === 'number') found.code = error.code;
  if (typeof error.message === 'string') found.message = error.message;
  if (typeof error.status === 'string') found.status = error.status;
  return found;
}

/** A detail of one `@type` (`type.googleapis.com/google.rpc.RetryInfo`, …). */
function detailOf(error: GoogleError, type: string): Record<string, unknown> | undefined {
  for (const detail of error.details) if (isRecord(detail) && detail['@type'] === `type.googleapis.com/google.rpc.${type}`) return detail;
  return undefined;
}

/** RetryInfo's `retryDelay` (a Duration: `"26s"`, `"0.5s"`) in milliseconds. */
export function retryDelayOf(error: GoogleError): number | undefined {
  const delay = detailOf(error, 'RetryInfo')?.retryDelay;
  const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

/** "API key not valid. Please pass a valid API key." (also "API Key not found", "API key expired"), ErrorInfo `API_KEY_INVALID`. */
const BAD_KEY = /\bAPI key (not valid|not found|expired)/i;
/** "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)." */
const TOO_MANY_TOKENS = /input token count.*exceeds the maximum|exceeds the maximum number of tokens/i;
/** A model that lacks a feature: "Function calling is not enabled for models/gemma-3-27b-it", "Unsupported MIME type: …". */
const MODEL_LACKS = /\bis not enabled for models\/|not supported (by|for) (this|the) model|unsupported mime type/i;

/**
 * Whose fault a Gemini error is. A 400 `INVALID_ARGUMENT` is the payload's, except a refused
 * key (auth: the next tier has its own), a prompt over this model's limit (another tier may
 * hold it) and a feature this model lacks; `FAILED_PRECONDITION` (billing, a region Google does
 * not serve) is the tier's. 429 `RESOURCE_EXHAUSTED` is retried after RetryInfo's delay when it
 * gives one (past the tier's retry.max_ms: the next tier now). 504 `DEADLINE_EXCEEDED` is a
 * prompt Google could not read in time: the same prompt would time out again, so the next tier.
 * Everything else reads as any server's.
 */
export function classifyGeminiStatus(status: number, body: string, headers?: IncomingHttpHeaders): StatusVerdict {
  const error = googleError(body);
  if (!error) return classifyStatus(status, body, headers);
  const message = error.message ?? errorText(body) ?? `HTTP ${status}`;
  const reason = detailOf(error, 'ErrorInfo')?.reason;
  if (reason === 'API_KEY_INVALID' || (status === 400 && BAD_KEY.test(message))) return { reason: 'auth', failover: true, retryable: false, message };
  if (status === 429) {
    const verdict: StatusVerdict = { reason: 'rate_limited', failover: true, retryable: true, message };
    const delay = retryDelayOf(error);
    if (delay !== undefined) verdict.retryAfterMs = delay;
    return verdict;
  }
  if (status === 400 && TOO_MANY_TOKENS.test(message)) return { reason: 'context_length', failover: true, retryable: false, message, healthNeutral: true };
  if (status === 400 && MODEL_LACKS.test(message)) return { reason: 'unsupported', failover: true, retryable: false, message, healthNeutral: true };
  if (error.status === 'FAILED_PRECONDITION') return { reason: 'client_error', failover: true, retryable: false, message };
  if (status === 504 || error.status === 'DEADLINE_EXCEEDED') return { reason: 'server_error', failover: true, retryable: false, message };
  if (status === 400) {
    const rejection = classifyRejection({ status, message });
    if (rejection === 'context_length') return { reason: 'context_length', failover: true, retryable: false, message, healthNeutral: true };
    if (rejection === 'unsupported_input') return { reason: 'unsupported', failover: true, retryable: false, message, healthNeutral: true };
    return { reason: rejection === 'content_policy' ? 'content_policy' : 'bad_request', failover: false, retryable: false, message };
  }
  return { ...classifyStatus(status, body, headers), message };
}
