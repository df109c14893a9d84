import type { IncomingHttpHeaders } from 'node:http';
import type { ClientProtocol } from './names.js';
import { clientHeaders } from './client-headers.js';
import { memoize } from './memoize.js';
import type { NeutralRequest } from './neutral.js';
import type { ClientRequest, Unsupported } from './types.js';

/** A validated client request: its body kept for relay, its neutral form made on first use. */
export function clientRequest(
  protocol: ClientProtocol,
  body: Record<string, unknown>,
  fields: { model: string; stream?: boolean | null },
  headers: IncomingHttpHeaders,
  toNeutral: (body: Record<string, unknown>) => NeutralRequest | Unsupported,
): ClientRequest {
  return { protocol, body, model: fields.model, stream: fields.stream === true, headers: clientHeaders(headers), neutral: memoize(() => toNeutral(body)) };
}
