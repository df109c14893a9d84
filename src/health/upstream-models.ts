import { getGlobalDispatcher, request } from '../util/undici.js';
import type { Provider } from '../config/schema.js';
import { isRecord } from '../util/is-record.js';
import { sendRetryingStale } from '../util/stale-socket-pool.js';
import { classifyStatus } from '../protocols/errors/classify-status.js';
import { checkHeaders, modelListUrl } from './provider-http.js';
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

const OLLAMA_PORT = '11434';

/**
 * OpenAI's `GET {base_url}/models` (Anthropic's `/v1/models`), or Ollama's `GET /api/tags`:
 * first for an ollama-type provider or Ollama's usual port, otherwise as the fallback when
 * /models gives no list. Network failures throw (unreachable).
 */
export async function listModels(provider: Provider, http: Http): Promise<ModelListing> {
  const base = new URL(provider.base_url);
  const ollamaFirst = isOllama(provider);
  if (ollamaFirst) {
    const tags = await ollamaTags(provider, base, http);
    if (tags) return { kind: 'listed', models: tags };
  }

  const answer = await getJson(modelListUrl(provider), provider, http);
  if (answer.status >= 200 && answer.status < 300) {
    const ids = openaiModelIds(answer.json);
    if (ids) return { kind: 'listed', models: ids };
  } else if (answer.status === 401 || answer.status === 403) {
    // A provider sent the client's own credential (api_key: from_client) is checked with none: it answered, so it is reachable.
    if (provider.from_client) return { kind: 'unlisted' };
    return { kind: 'rejected', auth: true, error: keyProblem(provider, answer) };
  } else if (isLoadingAnswer(answer.status, answer.message)) {
    return { kind: 'loading', message: answer.message };
  }

  if (!ollamaFirst) {
    const tags = await ollamaTags(provider, base, http);
    if (tags) return { kind: 'listed', models: tags };
  }
  // 404/405/501: the server has no model list (llama.cpp builds, some gateways); 2xx: a shape we cannot read.
  if (answer.status < 300 || answer.status === 404 || answer.status === 405 || answer.status === 501) return { kind: 'unlisted' };
  return { kind: 'rejected', auth: false, error: `the model list answered HTTP ${answer.status}: ${answer.message}` };
}

/** A 503 that says the server is loading (llama.cpp: `Loading model`), not one that says it is overloaded. */
export function isLoadingAnswer(status: number, message: string): boolean {
  return status === 503 && /\bloading\b|\bnot (yet )?loaded\b/i.test(message);
}

/** Exact, except that Ollama's implicit tag counts: `llama3` is `llama3:latest`. */
export function servesModel(models: string[], model: string): boolean {
  return models.some((name) => name === model || name === `${model}:latest` || `${name}:latest` === model);
}

export function missingModel(model: string, models: string[]): string {
  const shown = models.slice(0, 5).join(', ') + (models.length > 5 ? `, … (${models.length} in all)` : '');
  return `model "${model}" is not in the provider's model list (${models.length === 0 ? 'it is empty' : `it has: ${shown}`})`;
}

function keyProblem(provider: Provider, answer: JsonAnswer): string {
  const what = provider.api_key ? 'rejected the API key' : 'needs an API key (set api_key)';
  return `the provider ${what}: HTTP ${answer.status}: ${answer.message}`;
}

/**
 * The models an Ollama server has in memory now (`GET /api/ps`), or null when it does not
 * answer that: a model not loaded will be loaded by the next request (a cold start).
 */
export async function ollamaLoaded(provider: Provider, http: Http): Promise<string[] | null> {
  const answer = await getJson(besideApiRoot(new URL(provider.base_url), '/api/ps'), provider, http);
  if (answer.status < 200 || answer.status >= 300 || !isRecord(answer.json) || !Array.isArray(answer.json.models)) return null;
  return answer.json.models.flatMap((model: unknown) => (isRecord(model) && typeof model.name === 'string' ? [model.name] : []));
}

/** Whether a provider is (probably) an Ollama server: its type, or Ollama's usual port. */
export function isOllama(provider: Provider): boolean {
  return provider.type === 'ollama' || new URL(provider.base_url).port === OLLAMA_PORT;
}

/** Ollama's tag names, or null when the server does not answer /api/tags with a tag list. */
async function ollamaTags(provider: Provider, base: URL, http: Http): Promise<string[] | null> {
  const answer = await getJson(ollamaTagsUrl(base), provider, http);
  if (answer.status < 200 || answer.status >= 300 || !isRecord(answer.json) || !Array.isArray(answer.json.models)) return null;
  return answer.json.models.flatMap((model: unknown) => (isRecord(model) && typeof model.name === 'string' ? [model.name] : []));
}

function openaiModelIds(json: unknown): string[] | null {
  if (!isRecord(json) || !Array.isArray(json.data)) return null;
  return json.data.flatMap((model: unknown) => (isRecord(model) && typeof model.id === 'string' ? [model.id] : []));
}

/**
 * A path beside the OpenAI API root: Ollama's native API, llama.cpp's and vLLM's `/health` sit
 * next to `/v1` (also behind a reverse proxy that adds a path prefix).
 */
export function besideApiRoot(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${base.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}${path}`;
  url.search = '';
  return url;
}

function ollamaTagsUrl(base: URL): URL {
  return besideApiRoot(base, '/api/tags');
}

export interface JsonAnswer {
  status: number;
  json: unknown;
  /** The upstream's error message (or the start of its body). */
  message: string;
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
