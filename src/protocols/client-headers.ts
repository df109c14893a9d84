import type { IncomingHttpHeaders } from 'node:http';
import type { ClientHeaders } from './types.js';

/** The client headers a tier may be sent (never credentials). */
export function clientHeaders(headers: IncomingHttpHeaders): ClientHeaders {
  const out: ClientHeaders = { incoming: headers };
  const version = single(headers['anthropic-version']);
  if (version) out.anthropicVersion = version;
  const beta = headers['anthropic-beta'];
  if (beta) out.anthropicBeta = Array.isArray(beta) ? beta.join(',') : beta;
  const key = single(headers['idempotency-key']);
  if (key) out.idempotencyKey = key;
  return out;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
