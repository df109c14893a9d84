import type { Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import {
  type Discovered,
  type DiscoveryReader,
  type ModelListSource,
  type ProfiledProvider,
  type ProviderProfile,
  positiveInt,
  underBase,
} from '../core/provider-profile.js';
import { modelResource } from './model-path.js';

/**
 * Gemini's API (`type: gemini`, base URL `https://generativelanguage.googleapis.com`, without
 * `/v1beta`): its key in `x-goog-api-key`, its model list at `/v1beta/models` (paginated, each
 * model named `models/<id>`), and each model's limits at `/v1beta/models/<id>`: `inputTokenLimit`
 * is the window fit checks a prompt against. A cloud: no loaded state, no load request, and a
 * prompt too long for a model is refused (400), never cut.
 */
export const geminiProfile: ProviderProfile = {
  type: 'gemini',
  wire: 'gemini',
  genAiName: 'gcp.gemini',
  reasons: true,
  credentialApi: 'gemini',

  checkHeaders(provider: ProfiledProvider) {
    const headers: Record<string, string> = { accept: 'application/json', ...provider.headers };
    if (provider.api_key) headers['x-goog-api-key'] = provider.api_key;
    return headers;
  },

  // No /health: the model list says it serves (a page of one is enough).
  readiness: (provider: ProfiledProvider) => ({ probes: [], list: modelList(provider, 1) }),

  modelLists(provider: ProfiledProvider): readonly ModelListSource[] {
    return [{ url: modelList(provider, PAGE_SIZE), decisive: true, names: geminiModelNames, nextPage }];
  },

  // A provider sent the client's own key is asked nothing: checks never send a client's key, and Google answers none without one.
  discovery: (provider) => (provider.from_client ? [] : [modelEntry]),
  loadedState: async () => undefined,
  loadedInOneAsk: () => false,
  warm: async () => ({ noLoad: 'gemini' }),
  truncatesSilently: () => false,
  configuredWindow: () => undefined,
  windowPerRequest: false,
  // The most requests Gemini's batchEmbedContents takes ("at most 100 requests can be in one batch"); a larger batch is split.
  embeddingBatch: 100,
};

/** Gemini's largest page of models. */
const PAGE_SIZE = 1000;

function modelList(provider: ProfiledProvider, pageSize: number): URL {
  const url = underBase(provider.base_url, '/v1beta/models');
  url.searchParams.set('pageSize', String(pageSize));
  return url;
}

/** `{"models":[{"name":"models/gemini-2.5-flash",…}]}` as `gemini-2.5-flash`, …; null for another shape. */
export function geminiModelNames(json: unknown): string[] | null {
  if (!isRecord(json)) return null;
  // An empty page is `{}` (no `models` key), as Google's list answers with no model left.
  if (json.models === undefined) return Object.keys(json).length === 0 || typeof json.nextPageToken === 'string' ? [] : null;
  if (!Array.isArray(json.models)) return null;
  return json.models.flatMap((model: unknown) =>
    isRecord(model) && typeof model.name === 'string' ? [model.name.startsWith('models/') ? model.name.slice(7) : model.name] : [],
  );
}

/** The same list with `pageToken` set to the answer's `nextPageToken`, while it has one. */
function nextPage(json: unknown, url: URL): URL | undefined {
  if (!isRecord(json) || typeof json.nextPageToken !== 'string' || json.nextPageToken === '') return undefined;
  const next = new URL(url);
  next.searchParams.set('pageToken', json.nextPageToken);
  return next;
}

/**
 * `GET {base_url}/v1beta/models/{model}`: `inputTokenLimit` (the window), `outputTokenLimit`,
 * and `thinking: true` for a model that reasons. A 404 documents nothing (an unknown model: the
 * health check's list says so); any other refusal is an error worth showing.
 */
const modelEntry: DiscoveryReader = {
  name: 'gemini',
  async read(tier: Tier, ask) {
    const answer = await ask(underBase(tier.provider.base_url, `/v1beta/${modelResource(tier.model)}`));
    if (answer.status === 404) return null;
    if (answer.status !== 200 || !isRecord(answer.json)) throw new Error(`the model's entry answered HTTP ${answer.status}: ${answer.message}`);
    const facts: Discovered = { source: 'gemini /v1beta/models' };
    const context = positiveInt(answer.json.inputTokenLimit);
    if (context) facts.context = context;
    const output = positiveInt(answer.json.outputTokenLimit);
    if (output) facts.outputLimit = output;
    if (answer.json.thinking === true) facts.thinking = true;
    return facts;
  },
};
