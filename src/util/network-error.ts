import { isRecord } from './is-record.js';

/**
 * The one reading of a failure below HTTP (node:net, dns, undici): its errno-style code, what
 * kind of failure that is, and a few words for people. The kinds are the proxy's attempt
 * reasons; callers decide what each kind means for them (retry, fail over, report).
 */
export type NetworkFailureKind = 'connection_refused' | 'connect_timeout' | 'unreachable' | 'connection_reset';

export interface NetworkFailure {
  /** ECONNREFUSED, UND_ERR_SOCKET, ...; undefined when the error carries none. */
  code: string | undefined;
  /** undefined for a code not listed here (TLS, bad header values, a closed pool, ...). */
  kind: NetworkFailureKind | undefined;
  /** "connection refused", "host not found", ...; undefined with `kind`. */
  says: string | undefined;
}

const KNOWN: Record<string, { kind: NetworkFailureKind; says: string }> = {
  ECONNREFUSED: { kind: 'connection_refused', says: 'connection refused' },
  UND_ERR_CONNECT_TIMEOUT: { kind: 'connect_timeout', says: 'connect timeout' },
  ETIMEDOUT: { kind: 'connect_timeout', says: 'connect timeout' },
  ENOTFOUND: { kind: 'unreachable', says: 'host not found' },
  EAI_AGAIN: { kind: 'unreachable', says: 'host not found (DNS)' },
  EHOSTUNREACH: { kind: 'unreachable', says: 'host unreachable' },
  ENETUNREACH: { kind: 'unreachable', says: 'network unreachable' },
  ECONNRESET: { kind: 'connection_reset', says: 'connection reset' },
  EPIPE: { kind: 'connection_reset', says: 'connection reset' },
  ECONNABORTED: { kind: 'connection_reset', says: 'connection aborted' },
  UND_ERR_SOCKET: { kind: 'connection_reset', says: 'connection closed by the server' },
};

export function networkFailure(error: unknown): NetworkFailure {
  const code = errnoCode(error);
  const known = code === undefined ? undefined : KNOWN[code];
  return { code, kind: known?.kind, says: known?.says };
}

/**
 * The errno-style code of `error`, looking through wrappers: undici puts the socket's error
 * in `cause` (behind a bare UND_ERR), a connect to several addresses fails with an
 * AggregateError of them.
 */
export function errnoCode(error: unknown, depth = 0): string | undefined {
  if (!isRecord(error) || depth > 4) return undefined;
  if (typeof error.code === 'string' && error.code !== 'UND_ERR') return error.code;
  if (Array.isArray(error.errors) && error.errors.length > 0) return errnoCode(error.errors[0], depth + 1);
  return errnoCode(error.cause, depth + 1);
}
