import type { IncomingHttpHeaders } from 'node:http';
import type { RouteKind } from '../../config/schema.js';
import type { ClientCredential } from './credential.js';
import type { ClientProtocol } from './names.js';
import type { NeutralRequest } from './neutral.js';
import type { ClientHeaders, ClientRequest, Unsupported } from './types.js';

/** A validated client request: its body kept for relay, its neutral form made on first use. */
export function clientRequest(
  protocol: ClientProtocol,
  body: Record<string, unknown>,
  fields: { model: string; stream?: boolean | null; endpoint?: string },
  headers: IncomingHttpHeaders,
  toNeutral: (body: Record<string, unknown>) => NeutralRequest | Unsupported,
  credential: ClientCredential | undefined,
): ClientRequest {
  const request = {
    protocol,
    body,
    model: fields.model,
    stream: fields.stream === true,
    headers: clientHeaders(headers, credential),
    neutral: memoize(() => toNeutral(body)),
  };
  return fields.endpoint === undefined ? request : { ...request, endpoint: fields.endpoint };
}

/** The kind of route a request is for: embeddings (an embeddings endpoint's), else chat. */
export function requestKind(request: Pick<ClientRequest, 'operation'>): RouteKind {
  return request.operation === 'embeddings' ? 'embeddings' : 'chat';
}

/** A client's request as a token count (Messages' count_tokens, Gemini's countTokens): never streamed. */
export function asTokenCount(request: ClientRequest): ClientRequest {
  return { ...request, stream: false, operation: 'count_tokens' };
}

/** The body offers the model at least one tool (`tools`: a non-empty list, in every client protocol). */
export function offersTools(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

/** The client headers a tier may be sent (its credential only to a from_client provider). */
function clientHeaders(headers: IncomingHttpHeaders, credential: ClientCredential | undefined): ClientHeaders {
  const out: ClientHeaders = { incoming: headers };
  if (credential) out.credential = credential;
  const version = single(headers['anthropic-version']);
  if (version) out.anthropicVersion = version;
  const beta = headers['anthropic-beta'];
  if (beta) out.anthropicBeta = Array.isArray(beta) ? beta.join(',') : beta;
  const key = single(headers['idempotency-key']);
  if (key) out.idempotencyKey = key;
  return out;
}

/** A session id worth keeping: printable ASCII without spaces, short (it keys in-memory maps, never a metric label). */
const SANE_SESSION = /^[\x21-\x7e]{1,200}$/;

/** The first of `ids` that is a sane token (a header, then a body field): a request's session id. */
export function sessionId(...ids: unknown[]): string | undefined {
  for (const id of ids) {
    const value = Array.isArray(id) ? id[0] : id;
    if (typeof value === 'string' && SANE_SESSION.test(value)) return value;
  }
  return undefined;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A function that computes its value on the first call and returns it after. */
function memoize<T>(compute: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = compute();
      done = true;
    }
    return value;
  };
}
