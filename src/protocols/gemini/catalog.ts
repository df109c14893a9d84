import type { IncomingHttpHeaders } from 'node:http';
import { GOOGLE_KEY_HEADER, GOOGLE_KEY_PARAM } from '../../util/bearer.js';
import type { InfoAnswer, InfoAsk, InfoEndpoint } from '../core/client-codec.js';
import type { CatalogModel } from '../core/endpoints.js';
import { googleStatus } from './error-body.js';

/** What each route answers: the methods llm-route serves for a chat route, and for an embeddings route (docs/embeddings.md). */
const METHODS = ['generateContent', 'countTokens'];
const EMBEDDING_METHODS = ['embedContent', 'batchEmbedContents'];

/**
 * A request to `/v1/models` from a Gemini client: its key (x-goog-api-key, `?key=`) or Google's
 * SDK header (`x-goog-api-client`, which @google/genai sends). Any other client of `/v1/models`
 * gets OpenAI's list, as before.
 */
function geminiLooking(headers: IncomingHttpHeaders, query: URLSearchParams): boolean {
  return headers[GOOGLE_KEY_HEADER] !== undefined || headers['x-goog-api-client'] !== undefined || query.has(GOOGLE_KEY_PARAM);
}

/**
 * The routes as Gemini's models (`GET /v1beta/models`, `GET /v1beta/models/{model}`, and the
 * same under /v1 for a Gemini client): `models/<route>`, the route's largest known window as
 * `inputTokenLimit`, its answer cap as `outputTokenLimit` when every tier has one; an embeddings
 * route's methods are embedContent and batchEmbedContents.
 */
export function geminiCatalogEndpoints(version: '/v1beta' | '/v1'): InfoEndpoint[] {
  const claims = version === '/v1' ? geminiLooking : undefined;
  return [
    {
      path: `${version}/models`,
      method: 'GET',
      serves: 'info',
      claims,
      answer: ({ catalog }) => ({ status: 200, json: { models: catalog().models.map(asModel) } }),
    },
    { path: `${version}/models/{model}`, method: 'GET', serves: 'info', claims, answer: getModel },
  ];
}

function getModel({ catalog, target }: InfoAsk): InfoAnswer {
  const models = catalog().models;
  const model = models.find((entry) => entry.name === target.model);
  if (model) return { status: 200, json: asModel(model) };
  const known = models.map((entry) => entry.name).join(', ');
  const message = `models/${target.model ?? ''} is not found: a model is the name of a route (known: ${known})`;
  return { status: 404, json: { error: { code: 404, message, status: googleStatus(404) } } };
}

function asModel(model: CatalogModel): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: `models/${model.name}`,
    version: '001',
    displayName: model.name,
    description: `llm-route route ${model.name}`,
  };
  if (model.context !== undefined) out.inputTokenLimit = model.context;
  if (model.output !== undefined) out.outputTokenLimit = model.output;
  out.supportedGenerationMethods = model.embedding ? EMBEDDING_METHODS : METHODS;
  out.thinking = model.thinking;
  return out;
}
