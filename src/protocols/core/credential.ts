import type { IncomingHttpHeaders } from 'node:http';
import type { Provider } from '../../config/schema.js';
import { LLM_ROUTE_TOKEN_HEADER, sameSecret } from '../../util/bearer.js';
import { profileOf } from '../profiles.js';

// A client's own key or login, for a provider with `api_key: from_client`
// (docs/client-credentials.md): taken once at ingress, sent to such a provider of its own API only.

import type { CredentialApi } from './names.js';

export type { CredentialApi };

/** What a client protocol says of its clients' credentials (each client codec has one). */
export interface CredentialSpec {
  /** The API its clients' keys and logins are for: only a from_client provider of this type is sent one. */
  readonly api: CredentialApi;
  /** Headers that belong to the credential and go with it, as received (lower case). */
  readonly companions: readonly string[];
  /** What a user sets so that requests carry one: the advice of the 401 when none came. */
  readonly advice: string;
  /**
   * Where its clients send their key when not in Authorization or x-api-key: a header of its
   * own, or else a query parameter (sent on in that header). Gemini's: x-goog-api-key or `?key=`.
   */
  readonly keyIn?: { readonly header: string; readonly query?: string };
}

/** OpenAI's clients (Chat Completions and Responses): a key in Authorization, with its organization and project. */
export const OPENAI_CREDENTIAL: CredentialSpec = {
  api: 'openai',
  companions: ['openai-organization', 'openai-project'],
  advice: "set OPENAI_API_KEY (the SDK's apiKey) to your own OpenAI key",
};

const HIDDEN = '[client credential]';

/**
 * The client's Authorization and/or x-api-key, and the headers of its protocol that belong to
 * them, as received. Its secrets are what every message that may echo them is redacted of.
 * It never shows: JSON and Node's inspection print a placeholder.
 */
export class ClientCredential {
  constructor(
    readonly api: CredentialApi,
    readonly headers: Readonly<Record<string, string>>,
    readonly secrets: readonly string[],
  ) {}

  toJSON(): string {
    return HIDDEN;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return HIDDEN;
  }
}

export { LLM_ROUTE_TOKEN_HEADER };

/**
 * The client's credential in a request's headers (or its query, for a protocol whose clients
 * put their key there), or undefined when it carries none. An empty value is none
 * (`Authorization: Bearer `, as VS Code's Copilot sends). With `authToken` (server.auth_token)
 * set, the key is the client's only when llm-route's token came in x-llm-route-token (else the
 * key held that token), and a value equal to the token is never a credential. A protocol whose
 * keys are for no such provider (`spec` undefined: Ollama's API) has none.
 */
export function captureCredential(
  headers: IncomingHttpHeaders,
  spec: CredentialSpec | undefined,
  authToken: string | undefined,
  query?: URLSearchParams,
): ClientCredential | undefined {
  if (!spec || (authToken && headers[LLM_ROUTE_TOKEN_HEADER] === undefined)) return undefined;
  let sent: Record<string, string> | undefined;
  const secrets: string[] = [];
  const take = (name: string, value: string | undefined, secret: string): void => {
    if (value === undefined || secret === '' || (authToken && sameSecret(secret, authToken))) return;
    sent ??= {};
    sent[name] = value;
    secrets.push(secret);
  };
  if (spec.keyIn) {
    const { header, query: param } = spec.keyIn;
    const key = single(headers[header])?.trim() || (param === undefined ? undefined : query?.get(param)?.trim()) || undefined;
    take(header, key, key ?? '');
  } else {
    const authorization = single(headers.authorization);
    take('authorization', authorization, authorization === undefined ? '' : schemeValue(authorization));
    const key = single(headers['x-api-key']);
    take('x-api-key', key, key?.trim() ?? '');
  }
  if (!sent) return undefined;
  for (const name of spec.companions) {
    const value = headers[name];
    if (value !== undefined) sent[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return new ClientCredential(spec.api, sent, secrets);
}

/** `Bearer sk-…` → `sk-…`; a value without a scheme is its own secret. */
function schemeValue(authorization: string): string {
  const value = authorization.trim();
  const space = value.indexOf(' ');
  return space === -1 ? (/^bearer$/i.test(value) ? '' : value) : value.slice(space + 1).trim();
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Why a tier's provider cannot be sent this request (it takes the client's credential and the
 * request has none of its API), or null: it can, or it has a key of its own (or needs none).
 */
export function missingCredential(provider: Provider, credential: ClientCredential | undefined): string | null {
  if (!provider.from_client || credential?.api === profileOf(provider).credentialApi) return null;
  if (!credential) return 'the request carries no credential of the client (Authorization, x-api-key or x-goog-api-key) for this api_key: from_client provider';
  return `the client's credential is for ${API_NAMES[credential.api]}; this api_key: from_client provider is type ${provider.type}`;
}

const API_NAMES: Record<CredentialApi, string> = { anthropic: "Anthropic's API", openai: "OpenAI's API", gemini: "Gemini's API" };

/**
 * Adds a call's credential to its headers: for a from_client provider the client's own (as
 * received, with its companions), else the provider's api_key in the wire's header (none when
 * it has none). A credential of another API is never added (missingCredential skipped the tier).
 */
export function withCredential(
  headers: Record<string, string>,
  provider: Provider,
  credential: ClientCredential | undefined,
  keyHeader: 'authorization' | 'x-api-key' | 'x-goog-api-key',
): Record<string, string> {
  if (provider.from_client) {
    if (credential && credential.api === profileOf(provider).credentialApi) Object.assign(headers, credential.headers);
  } else if (provider.api_key) {
    headers[keyHeader] = keyHeader === 'authorization' ? `Bearer ${provider.api_key}` : provider.api_key;
  }
  return headers;
}
