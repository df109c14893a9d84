import type { ErrorKind, ErrorSpec } from '../core/types.js';

/** OpenAI's error `type` for each kind of error llm-route makes (Chat Completions and Responses). */
const TYPES: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'invalid_request_error',
  forbidden: 'invalid_request_error',
  not_found: 'invalid_request_error',
  rate_limit: 'rate_limit_error',
  upstream: 'upstream_error',
  overloaded: 'server_error',
  internal: 'internal_error',
  unavailable: 'service_unavailable',
};

/** `{"error":{"message","type","code",…}}`: the shape OpenAI's SDKs read. */
export function openaiErrorBody(error: ErrorSpec): string {
  return JSON.stringify({ error: { message: error.message, type: TYPES[error.kind], code: error.code, ...error.extra } });
}

/** A payload-fault answer from a tier in another protocol, in OpenAI's shape with the upstream's words. */
export function openaiRejection(status: number, message: string): string {
  const type = status === 401 || status === 403 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error';
  return JSON.stringify({ error: { message, type, code: null } });
}
