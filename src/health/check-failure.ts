import type { Provider } from '../config/schema.js';
import { isRecord } from '../util/is-record.js';
import type { Deadline } from './deadline.js';

/** A failure whose message is already meant for the user. */
export class CheckFailure extends Error {}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connect timeout',
};

/** One line saying why `step` failed: the deadline, a cancel, a known network error, or the error's own message. */
export function describeFailure(error: unknown, deadline: Deadline, provider: Provider, step: string): string {
  if (deadline.timedOut) return `no answer within ${deadline.timeoutMs} ms (${step})`;
  if (deadline.cancelled) return `cancelled (${step})`;
  if (error instanceof CheckFailure) return error.message;
  const code = errorCode(error);
  const known = code === undefined ? undefined : NETWORK_ERRORS[code];
  const host = new URL(provider.base_url).host;
  if (known) return `${known} (${host})`;
  return `${error instanceof Error ? error.message : String(error)} (${host}, ${step})`;
}

/** The errno-style code, also from inside the AggregateError of a multi-address connect, or a `cause`. */
function errorCode(error: unknown): string | undefined {
  if (!isRecord(error)) return undefined;
  if (typeof error.code === 'string') return error.code;
  if (Array.isArray(error.errors)) return errorCode(error.errors[0]);
  return errorCode(error.cause);
}
