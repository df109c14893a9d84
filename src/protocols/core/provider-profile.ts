import type { Provider, Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import type { ClientProtocol, CredentialApi } from './names.js';

/**
 * What the rest of llm-route asks of a provider, answered by its type's profile (beside the
 * wire codec it speaks), so that no room outside config/ and the profiles decides by a
 * provider's type: how a check sends its key, how its server says it is ready, where its model
 * list is, what it documents of a model's window and loaded state, how a model is loaded, and
 * what its models do. A profile knows the servers' words; the rooms that ask (health/, fit/)
 * make the HTTP calls, through the `ServerAsk` they hand it.
 */
export interface ProviderProfile {
  /** The tier file's `type`. */
  readonly type: Provider['type'];
  /** The wire protocol its server speaks natively (a wire is named as the client protocol it relays). */
  readonly wire: ClientProtocol;
  /** `gen_ai.provider.name` for a host the GenAI conventions do not name. */
  readonly genAiName: string;
  /** Its hosted models reason, whatever discovery says (Claude's extended thinking). */
  readonly reasons: boolean;
  /** The API a client's own key is for, when a provider of this type may take one (`api_key: from_client`). */
  readonly credentialApi?: CredentialApi;
  /** Headers a check (health, discovery, a load) sends: the provider's key in its style, and what its server needs. */
  checkHeaders(provider: ProfiledProvider): Record<string, string>;
  /** How its server says it is up, in the order the servers of this type answer. */
  readiness(provider: ProfiledProvider): ReadinessPlan;
  /** Where its model lists are, in the order they are asked (the decisive one says whether the server is usable). */
  modelLists(provider: ProfiledProvider): readonly ModelListSource[];
  /** What its server documents of a tier's window, vision and tools, first that answers (none: it documents nothing). */
  discovery(provider: Provider): readonly DiscoveryReader[];
  /** Whether a tier's model is in its server's memory, in the server's own words; undefined: it says nothing. Throws what a request threw. */
  loadedState(tier: Tier, ask: ServerAsk): Promise<ServerWord | undefined>;
  /** Its server says what is loaded in one request of its own API (Ollama's `/api/ps`): a tier check asks it too. */
  loadedInOneAsk(provider: Pick<Provider, 'base_url'>): boolean;
  /** Asks its server to load a tier's model (`warm: true`), or says which server documents no load request. */
  warm(tier: Tier, ask: ServerAsk): Promise<WarmAnswer | NoLoadRequest>;
  /** Its servers cut a prompt longer than their window and answer 200 (a late check of the reported prompt is sound). */
  truncatesSilently(provider: Provider): boolean;
  /** The window a tier's own options set on the server (Ollama's `num_ctx`), as its configured context. */
  configuredWindow(tier: Tier): number | undefined;
  /** It takes a window per request (Ollama's `options.num_ctx`): llm-route sizes it to the prompt. */
  readonly windowPerRequest: boolean;
  /** Its API has embeddings: the most inputs one request carries unless a tier's `max_batch` says (absent: no embeddings). */
  readonly embeddingBatch?: number;
}

/** The part of a provider a check reads (a `start:` command's wait knows no more). */
export type ProfiledProvider = Pick<Provider, 'type' | 'base_url' | 'api_key' | 'headers'>;

/** One GET or POST of a server's JSON answer, made by the room that asks (its deadline, dispatcher and key headers). */
export type ServerAsk = (url: URL, post?: unknown) => Promise<ServerAnswer>;

export interface ServerAnswer {
  status: number;
  /** Its body as JSON; undefined when it is not JSON. */
  json: unknown;
  /** The upstream's error message (or the start of its body). */
  message: string;
}

/** GETs that say "ready" with a 200 (a 503 from one that says so: still loading), then the model list, which decides. */
export interface ReadinessPlan {
  probes: readonly ReadinessProbe[];
  list: URL;
}

export interface ReadinessProbe {
  url: URL;
  /** Its 503 means "loading" (llama.cpp's `/health`); else a non-200 only means "ask the next". */
  loadingOn503: boolean;
}

/** A model list: where, and the model names in its answer (null: not a list of this shape). */
export interface ModelListSource {
  url: URL;
  /** Its answer's status decides when no list is read (a refused key, a server still loading, one with no list at all). */
  decisive: boolean;
  names(json: unknown): string[] | null;
  /** The next page of a paginated list (Gemini's `nextPageToken`); undefined: this answer was the last. */
  nextPage?(json: unknown, url: URL): URL | undefined;
}

/** What discovery learned of a tier's model from its server (docs/fit.md). */
export interface Discovered {
  /** The window a request gets, in tokens (llama.cpp: one slot's). */
  context?: number;
  /** Where `context` was read: `ollama /api/show`, `llama.cpp /props`, `vllm /v1/models`, `lmstudio /api/v0/models`, `gemini /v1beta/models`. */
  source?: string;
  vision?: boolean;
  tools?: boolean;
  /** The model reasons (Ollama lists `thinking` among its capabilities). */
  thinking?: boolean;
  /** The most tokens the model writes in one answer (Gemini's `outputTokenLimit`). */
  outputLimit?: number;
  /** Ollama: the most the model takes (`<arch>.context_length`) and the loaded runner's window. */
  modelContext?: number;
  loadedContext?: number;
}

/** One server's documented facts: null when it documents none (a 404); throws on an answer that is garbage. */
export interface DiscoveryReader {
  /** Its name in an error (`ollama`, `vllm`, `llamaCpp`, `lmStudio`, `gemini`). */
  readonly name: string;
  read(tier: Tier, ask: ServerAsk): Promise<Discovered | null>;
}

/** Which server said it, and what: whether the tier's model is loaded. */
export interface ServerWord {
  server: 'ollama' | 'llama-swap' | 'llama.cpp router' | 'lmstudio';
  loaded: boolean;
}

/** A load request's answer; `loadedNow`: a 2xx means the model is in memory (Ollama answers once it is). */
export interface WarmAnswer {
  status: number;
  message: string;
  loadedNow?: boolean;
  /** It was loaded already: nothing was asked. */
  already?: boolean;
}

/** The server that documents no load request (a model loads on its first request). */
export interface NoLoadRequest {
  noLoad: string;
}

/** `{"data":[{"id":…}]}`: OpenAI's model list, and the servers that copy it. */
export function openaiModelIds(json: unknown): string[] | null {
  if (!isRecord(json) || !Array.isArray(json.data)) return null;
  return json.data.flatMap((model: unknown) => (isRecord(model) && typeof model.id === 'string' ? [model.id] : []));
}

/**
 * A path beside the OpenAI API root: Ollama's native API, llama.cpp's and vLLM's `/health` sit
 * next to `/v1` (also behind a reverse proxy that adds a path prefix).
 */
export function besideApiRoot(base: URL | string, path: string): URL {
  const root = typeof base === 'string' ? new URL(base) : base;
  const url = new URL(root);
  url.pathname = `${root.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}${path}`;
  url.search = '';
  return url;
}

/** `{base_url}{path}`, the base's own path kept (`/v1` and a gateway's prefix). */
export function underBase(base: string, path: string): URL {
  const root = new URL(base);
  const url = new URL(root);
  url.pathname = `${root.pathname.replace(/\/+$/, '')}${path}`;
  return url;
}

/** Exact, except that Ollama's implicit tag counts: `llama3` is `llama3:latest`. */
export function servesModel(models: readonly string[], model: string): boolean {
  return models.some((name) => name === model || name === `${model}:latest` || `${name}:latest` === model);
}

/** A positive integer, or undefined (a server's window field). */
export function positiveInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The provider's own key as a Bearer token (OpenAI-compatible servers, Ollama behind a gateway). */
export function bearerCheckHeaders(provider: ProfiledProvider): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...provider.headers };
  if (provider.api_key) headers.authorization = `Bearer ${provider.api_key}`;
  return headers;
}
