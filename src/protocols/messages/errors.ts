import type { ErrorSpec } from '../core/types.js';

/** Anthropic's error `type` for a status, as its API and SDKs use them. */
export function anthropicErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** `{"type":"error","error":{"type","message",…}}`: the shape Anthropic's SDKs and Claude Code read. */
export function anthropicErrorBody(error: ErrorSpec): string {
  // Not overloaded_error for `unavailable`: Claude Code retries an overload, and this one would not pass.
  const type = error.kind === 'unavailable' ? 'api_error' : anthropicErrorType(error.status);
  return JSON.stringify({ type: 'error', error: { type, message: error.message, code: error.code, ...error.extra } });
}

/** A payload-fault answer from a tier in another protocol, in Anthropic's shape with the upstream's words. */
export function anthropicRejection(status: number, message: string): string {
  return JSON.stringify({ type: 'error', error: { type: anthropicErrorType(status), message } });
}
