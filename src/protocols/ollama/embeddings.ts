import type { Provider, Tier } from '../../config/schema.js';
import { estimateTokens } from '../../tokens/count.js';
import { isRecord } from '../../util/is-record.js';
import type { EmbeddingAnswer, EmbeddingAsk, EmbeddingClient, EmbeddingPart, EmbeddingWire, ProtocolEmbeddings, VectorScan } from '../core/embedding-codec.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import { bodyObject } from '../core/json.js';
import { upstreamPath } from '../core/paths.js';
import type { ClientHeaders, Unsupported, UpstreamRequest } from '../core/types.js';
import { inputsText, readDimensions, readInputs, sendsOwnInput } from '../embeddings/inputs.js';
import { lastNumber, looksLikeObject, nestedArrays, nestedTexts, valueAt } from '../embeddings/scan.js';
import { AnswerWriter } from '../embeddings/vectors.js';

/*
 * Ollama's embeddings (docs/embeddings.md): `POST /api/embed` (`input` a text or texts,
 * `truncate` default true, `dimensions`, `keep_alive`, `options`) answered
 * `{"model","embeddings":[[…]],"total_duration","load_duration","prompt_eval_count"}`, and the
 * older `POST /api/embeddings` (`prompt` → `{"embedding":[…]}`). `ollama` tiers are sent
 * `/api/embed`, whose vectors are normalized as every other server's are (the older endpoint's
 * are not), so every tier of a space answers alike.
 */

const EMBEDDINGS_KEY = Buffer.from('"embeddings"');
const PROMPT_EVAL_COUNT = Buffer.from('"prompt_eval_count"');

/** `/api/embed`'s ask: an empty text asks for no vector (Ollama answers `embeddings: []`). */
function readEmbed(body: Record<string, unknown>): EmbeddingAsk | string {
  const inputs = body.input === '' ? [] : readInputs(body.input, { tokens: false });
  if (typeof inputs === 'string') return inputs;
  if (body.truncate !== undefined && typeof body.truncate !== 'boolean') return 'truncate must be true or false';
  const dimensions = readDimensions(body.dimensions);
  if (typeof dimensions === 'string') return dimensions;
  const ask: EmbeddingAsk = { inputs, encoding: 'float', truncate: body.truncate !== false };
  if (dimensions !== undefined) ask.dimensions = dimensions;
  return ask;
}

/** `/api/embeddings`' ask: one `prompt` (none, or an empty one: no vector, as Ollama answers a request that only loads the model). */
function readLegacy(body: Record<string, unknown>): EmbeddingAsk | string {
  const prompt = body.prompt;
  if (prompt !== undefined && typeof prompt !== 'string') return 'prompt must be a string';
  return { inputs: prompt ? [prompt] : [], encoding: 'float', truncate: true };
}

/** Ollama's durations are nanoseconds. */
function sinceNs(arrivedAt: number): number {
  return Math.round((performance.now() - arrivedAt) * 1e6);
}

const embedClient: EmbeddingClient = {
  speaks: 'ollama',
  relaysAnswer: true,
  read: readEmbed,
  render(answer, ask, request, arrivedAt) {
    const out = new AnswerWriter('float').write(`{"model":${JSON.stringify(request.model)},"embeddings":[`);
    answer.vectors.forEach((vector, index) => out.write(index === 0 ? '' : ',').vector(vector));
    const tokens = answer.promptTokens ?? estimateTokens(inputsText(ask.inputs));
    return out.write(`],"total_duration":${sinceNs(arrivedAt)},"load_duration":0,"prompt_eval_count":${tokens}}`).done();
  },
};

const legacyClient: EmbeddingClient = {
  relaysAnswer: false,
  read: readLegacy,
  render: (answer) => {
    const out = new AnswerWriter('float').write('{"embedding":');
    return (answer.vectors.length === 0 ? out.write('[]') : out.vector(answer.vectors[0])).write('}').done();
  },
};

const ollamaEmbeddingWire: EmbeddingWire = {
  protocol: 'ollama',

  request(provider: Provider, tier: Tier, part: EmbeddingPart, client: ClientHeaders, relayBody?: Record<string, unknown>): UpstreamRequest | Unsupported {
    if (part.inputs.some((input) => typeof input !== 'string')) return { unsupported: "Ollama's /api/embed takes texts, not token ids" };
    const body: Record<string, unknown> = relayBody ? { ...relayBody, model: tier.model } : { model: tier.model, truncate: part.truncate };
    if (!relayBody || !sendsOwnInput(relayBody.input, part.inputs)) body.input = part.inputs;
    if (!relayBody && part.dimensions !== undefined) body.dimensions = part.dimensions;
    // The tier's num_ctx and keep_alive where the client set none of its own (as for /api/chat).
    const options = isRecord(body.options) ? body.options : undefined;
    if (tier.ollama.num_ctx !== undefined && options?.num_ctx === undefined) body.options = { ...options, num_ctx: tier.ollama.num_ctx };
    if (tier.ollama.keep_alive !== undefined && body.keep_alive === undefined) body.keep_alive = tier.ollama.keep_alive;
    const headers = bearerAuth(baseHeaders(provider, false, client), provider, client);
    return { method: 'POST', path: upstreamPath(provider.base_url, '/api/embed'), headers, body: JSON.stringify(body) };
  },

  scan(body: Buffer): VectorScan | 'not_json' {
    if (!looksLikeObject(body)) return 'not_json';
    const vectors = nestedArrays(body, valueAt(body, EMBEDDINGS_KEY));
    if (!vectors || vectors.width === -1) return 'not_json';
    return { count: vectors.count, width: vectors.width, encoding: 'float', promptTokens: lastNumber(body, PROMPT_EVAL_COUNT) };
  },

  decode(body: Buffer): EmbeddingAnswer | 'not_json' {
    // The vectors' text as written, no number parsed; else the whole answer parsed.
    const texts = looksLikeObject(body) ? nestedTexts(body, valueAt(body, EMBEDDINGS_KEY)) : null;
    if (texts) return { vectors: texts, promptTokens: lastNumber(body, PROMPT_EVAL_COUNT) };
    const answer = bodyObject(body);
    if (!answer || !Array.isArray(answer.embeddings)) return 'not_json';
    for (const vector of answer.embeddings) if (!Array.isArray(vector) || !vector.every((value) => typeof value === 'number')) return 'not_json';
    const decoded: EmbeddingAnswer = {
      vectors: answer.embeddings as number[][],
      promptTokens: typeof answer.prompt_eval_count === 'number' ? answer.prompt_eval_count : undefined,
    };
    if (typeof answer.model === 'string') decoded.model = answer.model;
    return decoded;
  },
};

/** `/api/embed` and `/api/embeddings`, and `ollama` tiers' `/api/embed`. */
export const ollamaEmbeddings: ProtocolEmbeddings = {
  endpoints: [
    { path: '/api/embed', client: embedClient },
    { path: '/api/embeddings', client: legacyClient },
  ],
  wire: ollamaEmbeddingWire,
};
