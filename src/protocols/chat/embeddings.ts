import type { Provider, Tier } from '../../config/schema.js';
import { findUsageObject } from '../../providers/usage-scan.js';
import { estimateTokens } from '../../tokens/count.js';
import { isRecord } from '../../util/is-record.js';
import type {
  EmbeddingAnswer,
  EmbeddingAsk,
  EmbeddingClient,
  EmbeddingPart,
  EmbeddingWire,
  ProtocolEmbeddings,
  Vector,
  VectorScan,
} from '../core/embedding-codec.js';
import { baseHeaders, bearerAuth } from '../core/headers.js';
import { bodyObject } from '../core/json.js';
import { upstreamPath } from '../core/paths.js';
import type { ClientHeaders, UpstreamRequest } from '../core/types.js';
import { inputsText, readDimensions, readInputs, sendsOwnInput } from '../embeddings/inputs.js';
import { arrayWidth, base64At, countKeys, looksLikeObject, numbersOf, valueAt, vectorTexts } from '../embeddings/scan.js';
import { AnswerWriter } from '../embeddings/vectors.js';

/*
 * OpenAI's embeddings (docs/embeddings.md): `POST /v1/embeddings` in, `POST {base_url}/embeddings`
 * out (OpenAI, vLLM, llama.cpp's llama-server started with --embeddings, LM Studio, Ollama's
 * /v1). `input` is a text, texts, token ids or lists of them; vectors come as numbers or, with
 * `encoding_format: base64`, as base64 of float32s (what the openai SDK asks for by default).
 */

const EMBEDDING = Buffer.from('"embedding"');
const INDEX = Buffer.from('"index"');

const ENCODINGS = new Set(['float', 'base64']);

/** The ask in an OpenAI embeddings body; its inputs are never cut (OpenAI answers 400 to one too long). */
function readAsk(body: Record<string, unknown>): EmbeddingAsk | string {
  const inputs = readInputs(body.input, { tokens: true });
  if (typeof inputs === 'string') return inputs;
  const format = body.encoding_format ?? 'float';
  if (typeof format !== 'string' || !ENCODINGS.has(format)) return 'encoding_format must be "float" or "base64"';
  const dimensions = readDimensions(body.dimensions);
  if (typeof dimensions === 'string') return dimensions;
  const ask: EmbeddingAsk = { inputs, encoding: format as EmbeddingAsk['encoding'], truncate: false };
  if (dimensions !== undefined) ask.dimensions = dimensions;
  return ask;
}

const openaiEmbeddingClient: EmbeddingClient = {
  speaks: 'chat',
  relaysAnswer: true,
  read: readAsk,
  render(answer, ask, request) {
    const out = new AnswerWriter(ask.encoding).write('{"object":"list","data":[');
    answer.vectors.forEach((vector, index) =>
      out
        .write(`${index === 0 ? '' : ','}{"object":"embedding","index":${index},"embedding":`)
        .vector(vector)
        .write('}'),
    );
    // Every OpenAI answer has its usage: a server that reported none is estimated (the usage log says so).
    const tokens = answer.promptTokens ?? estimateTokens(inputsText(ask.inputs));
    return out.write(`],"model":${JSON.stringify(request.model)},"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens}}}`).done();
  },
};

const openaiEmbeddingWire: EmbeddingWire = {
  protocol: 'chat',

  request(provider: Provider, tier: Tier, part: EmbeddingPart, client: ClientHeaders, relayBody?: Record<string, unknown>): UpstreamRequest {
    const body: Record<string, unknown> = relayBody ? { ...relayBody, model: tier.model } : { model: tier.model };
    // The client's own `input` when it goes as it came (one request, nothing cut): its text is sent unchanged.
    if (!relayBody || !sendsOwnInput(relayBody.input, part.inputs)) body.input = part.inputs;
    if (!relayBody) {
      if (part.encoding === 'base64') body.encoding_format = 'base64';
      if (part.dimensions !== undefined) body.dimensions = part.dimensions;
    }
    const headers = bearerAuth(baseHeaders(provider, false, client), provider, client);
    return { method: 'POST', path: upstreamPath(provider.base_url, '/embeddings'), headers, body: JSON.stringify(body) };
  },

  scan(body: Buffer): VectorScan | 'not_json' {
    if (!looksLikeObject(body)) return 'not_json';
    const first = valueAt(body, EMBEDDING);
    if (first === -1)
      return valueAt(body, Buffer.from('"data"')) === -1 ? 'not_json' : { count: 0, width: 0, encoding: 'float', promptTokens: promptTokens(body) };
    const numbers = arrayWidth(body, first);
    const width = numbers === -1 ? base64At(body, first) : numbers;
    if (width === -1) return 'not_json';
    return { count: countKeys(body, EMBEDDING), width, encoding: numbers === -1 ? 'base64' : 'float', promptTokens: promptTokens(body) };
  },

  decode(body: Buffer): EmbeddingAnswer | 'not_json' {
    // Entries in order (every server writes them so): the vectors' text as written, no number parsed.
    const texts = looksLikeObject(body) ? vectorTexts(body, EMBEDDING) : null;
    if (texts && texts.length > 0 && inOrder(numbersOf(body, INDEX), texts.length)) return { vectors: texts, promptTokens: promptTokens(body) };
    const answer = bodyObject(body);
    if (!answer || !Array.isArray(answer.data)) return 'not_json';
    const entries: { index: number; vector: Vector }[] = [];
    for (const [position, item] of answer.data.entries()) {
      if (!isRecord(item)) return 'not_json';
      const vector = item.embedding;
      const index = typeof item.index === 'number' ? item.index : position;
      if (typeof vector === 'string') entries.push({ index, vector: { base64: vector } });
      else if (Array.isArray(vector) && vector.every((value) => typeof value === 'number')) entries.push({ index, vector: vector as number[] });
      else return 'not_json';
    }
    // In input order whatever order the server listed them in.
    entries.sort((a, b) => a.index - b.index);
    const decoded: EmbeddingAnswer = { vectors: entries.map((entry) => entry.vector), promptTokens: usageTokens(answer.usage) };
    if (typeof answer.model === 'string') decoded.model = answer.model;
    return decoded;
  },
};

/** Indexes 0, 1, 2, … : one per vector, in order. */
function inOrder(indexes: readonly number[], count: number): boolean {
  return indexes.length === count && indexes.every((index, i) => index === i);
}

function promptTokens(body: Buffer): number | undefined {
  const usage = findUsageObject(body);
  if (usage === null || usage === 'not_json') return undefined;
  try {
    return usageTokens(JSON.parse(usage));
  } catch {
    return undefined;
  }
}

function usageTokens(usage: unknown): number | undefined {
  return isRecord(usage) && typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
}

/** `POST /v1/embeddings` (`/embeddings` too: the server adds `/v1`), and `openai` tiers' `{base_url}/embeddings`. */
export const openaiEmbeddings: ProtocolEmbeddings = {
  endpoints: [{ path: '/v1/embeddings', client: openaiEmbeddingClient }],
  wire: openaiEmbeddingWire,
};
