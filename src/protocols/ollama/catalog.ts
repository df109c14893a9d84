import { nodeCrypto } from '../../util/node-crypto.js';
import { isRecord } from '../../util/is-record.js';
import type { InfoAnswer, InfoAsk, InfoEndpoint } from '../core/client-codec.js';
import type { CatalogModel, ModelCatalog } from '../core/endpoints.js';

/**
 * The version /api/version reports: one the common clients accept (VS Code's Copilot asks
 * for at least 0.6.4; thinking, tool-call ids and `capabilities` came by 0.12).
 */
export const OLLAMA_VERSION = '0.12.6';

/** The architecture /api/show names, so `<arch>.context_length` carries the route's window. */
const ARCHITECTURE = 'llm-route';

/** How long /api/ps says a loaded route stays loaded: Ollama's default keep_alive. */
const KEEP_ALIVE_MS = 5 * 60_000;

/** What llm-route answers itself of Ollama's API: the probes, the routes as models, and the endpoints it does not offer. */
export const ollamaInfoEndpoints: readonly InfoEndpoint[] = [
  { path: '/', method: 'GET', serves: 'info', head: true, answer: () => ({ status: 200, text: 'Ollama is running' }) },
  { path: '/api/version', method: 'GET', serves: 'info', head: true, answer: () => ({ status: 200, json: { version: OLLAMA_VERSION } }) },
  { path: '/api/tags', method: 'GET', serves: 'info', head: true, answer: ({ catalog }) => ({ status: 200, json: { models: listed(catalog()) } }) },
  { path: '/api/show', method: 'POST', serves: 'info', readsBody: true, answer: show },
  { path: '/api/ps', method: 'GET', serves: 'info', answer: ({ catalog }) => ({ status: 200, json: { models: running(catalog()) } }) },
  ...(
    [
      ['/api/pull', 'POST', 'pulling models'],
      ['/api/push', 'POST', 'pushing models'],
      ['/api/create', 'POST', 'creating models'],
      ['/api/copy', 'POST', 'copying models'],
      ['/api/delete', 'DELETE', 'deleting models'],
    ] as const
  ).map(([path, method, what]): InfoEndpoint => ({ path, method, serves: 'info', answer: () => notOffered(path, what) })),
];

function notOffered(path: string, what: string): InfoAnswer {
  return {
    status: 501,
    json: { error: `llm-route routes models (/api/chat, /api/generate, /api/embed), not their files; ${path} (${what}) is not supported` },
  };
}

/** /api/show: a route's capabilities, its window as `<arch>.context_length`, its details. */
function show({ catalog, body }: InfoAsk): InfoAnswer {
  const name = isRecord(body) ? (typeof body.model === 'string' && body.model !== '' ? body.model : body.name) : undefined;
  if (typeof name !== 'string' || name === '') return { status: 400, json: { error: 'model is required' } };
  const model = catalog().models.find((entry) => entry.name === name);
  if (!model) return { status: 404, json: { error: `model '${name}' not found` } };
  const info: Record<string, unknown> = { 'general.architecture': ARCHITECTURE, 'general.basename': model.name };
  if (model.context !== undefined) info[`${ARCHITECTURE}.context_length`] = model.context;
  return {
    status: 200,
    json: { details: details(), model_info: info, capabilities: capabilities(model), modified_at: modifiedAt(catalog()) },
  };
}

/** Ollama's capability words: every chat route completes (tools, vision and thinking when some tier can); an embeddings route embeds. */
function capabilities(model: CatalogModel): string[] {
  if (model.embedding) return ['embedding'];
  const words = ['completion'];
  if (model.tools) words.push('tools');
  if (model.vision) words.push('vision');
  if (model.thinking) words.push('thinking');
  return words;
}

/** /api/tags: each model (a route, or an alias that is a plain name) as Ollama lists one. */
function listed(catalog: ModelCatalog): Record<string, unknown>[] {
  const modified = modifiedAt(catalog);
  return catalog.models.map((model) => ({
    name: model.name,
    model: model.name,
    modified_at: modified,
    size: 0,
    digest: digest(model.name),
    details: details(),
    capabilities: capabilities(model),
  }));
}

/** /api/ps: the models whose first tier is loaded now. */
function running(catalog: ModelCatalog): Record<string, unknown>[] {
  const expires = new Date(Date.now() + KEEP_ALIVE_MS).toISOString();
  return catalog.models
    .filter((model) => model.loaded)
    .map((model) => ({
      name: model.name,
      model: model.name,
      size: 0,
      digest: digest(model.name),
      details: details(),
      expires_at: expires,
      size_vram: 0,
      context_length: model.context ?? 0,
    }));
}

/** A route is no model file: its details say what it is. */
function details(): Record<string, unknown> {
  return { parent_model: '', format: ARCHITECTURE, family: ARCHITECTURE, families: [ARCHITECTURE], parameter_size: '', quantization_level: '' };
}

function modifiedAt(catalog: ModelCatalog): string {
  return new Date(catalog.startedAt).toISOString();
}

/** A stable digest per name (clients key caches on it). */
function digest(name: string): string {
  return nodeCrypto().createHash('sha256').update(`llm-route:${name}`).digest('hex');
}
