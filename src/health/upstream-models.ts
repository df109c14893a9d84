import { getGlobalDispatcher, request } from '../util/undici.js';
import type { Provider } from '../config/schema.js';
import { sendRetryingStale } from '../util/stale-socket-pool.js';
import { classifyStatus } from '../protocols/errors/classify-status.js';
import { checkHeaders } from './provider-http.js';
import { profileOf } from '../protocols/profiles.js';

import type { ModelListSource, ServerAnswer, ServerAsk } from '../protocols/core/provider-profile.js';

export { besideApiRoot, servesModel } from '../protocols/core/provider-profile.js';
import type { Http } from './deadline.js';

// Step 1 of a tier check: is the provider reachable, and does it list the tier's model?

export type ModelListing =
  | { kind: 'listed'; models: string[] }
  /** The server answered but offers no model list (some lack /models): presence unknown, not a failure. */
  | { kind: 'unlisted' }
  /** The server answered with an error that makes the tier unusable (a refused key, a 5xx). */
  | { kind: 'rejected'; auth: boolean; error: string }
  /** 503 while it loads its model (llama.cpp answers so on every endpoint): not ready yet, not broken. */
  | { kind: 'loading'; message: string };

/**
 * The provider's model lists, in the order its profile gives (Ollama's `/api/tags` first for an
 * Ollama server; OpenAI's `GET {base_url}/models`, Anthropic's `/v1/models` first otherwise):
 * the first list read answers; else the decisive list's status says why there is none. Network
 * failures throw (unreachable).
 */
export async function listModels(provider: Provider, http: Http): Promise<ModelListing> {
  let decisive: JsonAnswer | undefined;
  for (const source of profileOf(provider).modelLists(provider)) {
    const answer = await getJson(source.url, provider, http);
    const names = answer.status >= 200 && answer.status < 300 ? source.names(answer.json) : null;
    if (names) return { kind: 'listed', models: await withLaterPages(source, answer.json, names, provider, http) };
    if (!source.decisive) continue;
    decisive = answer;
    if (answer.status === 401 || answer.status === 403) {
      // A provider sent the client's own credential (api_key: from_client) is checked with none: it answered, so it is reachable.
      if (provider.from_client) return { kind: 'unlisted' };
      return { kind: 'rejected', auth: true, error: keyProblem(provider, answer) };
    }
    if (isLoadingAnswer(answer.status, answer.message)) return { kind: 'loading', message: answer.message };
  }
  // 404/405/501: the server has no model list (llama.cpp builds, some gateways); 2xx: a shape we cannot read.
  const status = decisive?.status ?? 404;
  if (status < 300 || status === 404 || status === 405 || status === 501) return { kind: 'unlisted' };
  return { kind: 'rejected', auth: false, error: `the model list answered HTTP ${status}: ${decisive?.message}` };
}

/** Pages of one list read at most (Gemini's holds a few dozen models a page of 1000). */
const MAX_PAGES = 10;

/** A paginated list's later pages appended to its first (Gemini's `nextPageToken`); a page that fails ends it with what was read. */
async function withLaterPages(source: ModelListSource, json: unknown, names: string[], provider: Provider, http: Http): Promise<string[]> {
  let next = source.nextPage?.(json, source.url);
  for (let page = 1; next !== undefined && page < MAX_PAGES; page++) {
    const answer = await getJson(next, provider, http).catch(() => null);
    const more = answer && answer.status >= 200 && answer.status < 300 ? source.names(answer.json) : null;
    if (!more) break;
    names.push(...more);
    next = source.nextPage?.(answer?.json, next);
  }
  return names;
}

/** A 503 that says the server is loading (llama.cpp: `Loading model`), not one that says it is overloaded. */
export function isLoadingAnswer(status: number, message: string): boolean {
  return status === 503 && /\bloading\b|\bnot (yet )?loaded\b/i.test(message);
}

export function missingModel(model: string, models: string[]): string {
  const shown = models.slice(0, 5).join(', ') + (models.length > 5 ? `, … (${models.length} in all)` : '');
  return `model "${model}" is not in the provider's model list (${models.length === 0 ? 'it is empty' : `it has: ${shown}`})`;
}

function keyProblem(provider: Provider, answer: JsonAnswer): string {
  const what = provider.api_key ? 'rejected the API key' : 'needs an API key (set api_key)';
  return `the provider ${what}: HTTP ${answer.status}: ${answer.message}`;
}

export type JsonAnswer = ServerAnswer;

/** The provider's server asked under one check's deadline: what its profile's readers call. */
export function askServer(provider: Provider, http: Http): ServerAsk {
  return (url, post) => getJson(url, provider, http, post);
}

/** A GET (or, with `post`, a POST of that JSON: Ollama's /api/show) of a server's JSON answer. */
export async function getJson(url: URL, provider: Provider, http: Http, post?: unknown): Promise<JsonAnswer> {
  const headers = checkHeaders(provider);
  const body = post === undefined ? undefined : JSON.stringify(post);
  if (body !== undefined) headers['content-type'] = 'application/json';
  // A pooled socket the server had closed is retried once on a new one: not a failed check.
  const response = await sendRetryingStale(http.dispatcher ?? getGlobalDispatcher(), url.origin, (dispatcher) =>
    request(url, { method: body === undefined ? 'GET' : 'POST', headers, body, signal: http.signal, dispatcher }),
  );
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: json stays undefined, the caller treats it as "no list"
  }
  const message = classifyStatus(response.statusCode, text).message;
  return { status: response.statusCode, json, message };
}
