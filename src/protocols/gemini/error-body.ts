import type { ErrorSpec } from '../core/types.js';

// Google's error shape as llm-route writes it to a Gemini client (what a gemini tier's own errors
// mean is the wire's to read).

/** Google's canonical status for an HTTP status, as Gemini's API names its errors. */
export function googleStatus(code: number): string {
  switch (code) {
    case 400:
    case 413:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return code >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT';
  }
}

/** `{"error":{"code","message","status"}}`, the shape Gemini's API and its SDKs use (llm-route's own fields, e.g. `attempts`, beside them). */
export function geminiErrorBody(error: ErrorSpec): string {
  return JSON.stringify({ error: { code: error.status, message: error.message, status: googleStatus(error.status), ...error.extra } });
}

/** A payload-fault answer from a tier in another protocol, in Gemini's shape with the upstream's words. */
export function geminiRejection(status: number, message: string): string {
  return JSON.stringify({ error: { code: status, message, status: googleStatus(status) } });
}

/**
 * The error object a committed stream ends with: a Gemini stream has no error event, so, as
 * Google's servers do, the last chunk is the error itself (`{"error":{…}}`), and nothing follows.
 * An interrupted answer is a 503 (UNAVAILABLE): the SDKs raise it, and agents retry the turn.
 */
export function streamErrorJson(message: string): string {
  return JSON.stringify({ error: { code: 503, message: `llm-route: ${message}`, status: 'UNAVAILABLE' } });
}
