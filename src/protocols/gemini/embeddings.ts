import type { Provider, Tier } from '../../config/schema.js';
import { isRecord } from '../../util/is-record.js';
import type { EmbeddingAnswer, EmbeddingClient, EmbeddingPart, EmbeddingWire, ProtocolEmbeddings, VectorScan } from '../core/embedding-codec.js';
import { bodyObject } from '../core/json.js';
import type { ClientHeaders, Unsupported, UpstreamRequest } from '../core/types.js';
import { arrayWidth, countKeys, looksLikeObject, valueAt, vectorTexts } from '../embeddings/scan.js';
import { AnswerWriter } from '../embeddings/vectors.js';
import { clientRequests, contentText, readBatchEmbedContents, readEmbedContent } from './embed-requests.js';
import { methodPath, modelResource } from './model-path.js';
import { geminiRequest } from './wire.js';

/*
 * Gemini's embeddings (docs/embeddings.md): `POST /v1beta/models/{route}:embedContent` (one
 * request, answered `{"embedding":{"values":[…]}}`) and `:batchEmbedContents` (`requests`,
 * answered `{"embeddings":[{"values":[…]}, …]}`) in, under /v1 too; `gemini` tiers are sent
 * `POST {base_url}/v1beta/models/{model}:batchEmbedContents`, each request naming the tier's
 * model, as Gemini wants. Gemini's answers report no tokens: the usage log estimates them.
 */

const VALUES = Buffer.from('"values"');
const EMBEDDINGS = Buffer.from('"embeddings"');

/** `:batchEmbedContents`: a gemini tier's answer to a batch sent in one request goes out as its bytes. */
const batchClient: EmbeddingClient = {
  speaks: 'gemini',
  relaysAnswer: true,
  read: readBatchEmbedContents,
  render(answer) {
    const out = new AnswerWriter('float').write('{"embeddings":[');
    answer.vectors.forEach((vector, index) =>
      out
        .write(index === 0 ? '{"values":' : ',{"values":')
        .vector(vector)
        .write('}'),
    );
    return out.write(']}').done();
  },
};

/** `:embedContent`: one vector, in a shape no tier answers (a gemini tier is asked a batch of one); its bytes are copied, never parsed. */
const embedContentClient: EmbeddingClient = {
  speaks: 'gemini',
  relaysAnswer: false,
  read: readEmbedContent,
  render: (answer) => {
    const out = new AnswerWriter('float').write('{"embedding":{"values":');
    return (answer.vectors.length === 0 ? out.write('[]') : out.vector(answer.vectors[0])).write('}}').done();
  },
};

const geminiEmbeddingWire: EmbeddingWire = {
  protocol: 'gemini',

  /**
   * One part of a batch as `:batchEmbedContents`. A Gemini client's own requests go as it wrote
   * them (`taskType`, `title`, `outputDimensionality`, whatever else Gemini reads), each naming
   * the tier's model, its content replaced only where fit cut its text; any other client's
   * inputs as text contents, its `dimensions` as `outputDimensionality`.
   */
  request(provider: Provider, tier: Tier, part: EmbeddingPart, client: ClientHeaders, relayBody?: Record<string, unknown>): UpstreamRequest | Unsupported {
    if (part.inputs.some((input) => typeof input !== 'string')) return { unsupported: "Gemini's embeddings take texts, not token ids" };
    const model = modelResource(tier.model);
    const own = relayBody ? clientRequests(relayBody).slice(part.offset, part.offset + part.inputs.length) : [];
    const requests = part.inputs.map((input, i): Record<string, unknown> => {
      const sent = own[i];
      if (isRecord(sent)) {
        const content = contentText(sent.content, '') === input ? sent.content : { ...(sent.content as object), parts: [{ text: input }] };
        return { ...sent, model, content };
      }
      const request: Record<string, unknown> = { model, content: { parts: [{ text: input }] } };
      if (part.dimensions !== undefined) request.outputDimensionality = part.dimensions;
      return request;
    });
    return geminiRequest(provider, methodPath(provider, tier, 'batchEmbedContents'), JSON.stringify({ requests }), false, client);
  },

  scan(body: Buffer): VectorScan | 'not_json' {
    if (!looksLikeObject(body)) return 'not_json';
    const first = valueAt(body, VALUES);
    if (first === -1) return valueAt(body, EMBEDDINGS) === -1 ? 'not_json' : { count: 0, width: 0, encoding: 'float', promptTokens: undefined };
    const width = arrayWidth(body, first);
    if (width === -1) return 'not_json';
    return { count: countKeys(body, VALUES), width, encoding: 'float', promptTokens: undefined };
  },

  decode(body: Buffer): EmbeddingAnswer | 'not_json' {
    // The vectors' text as Google wrote it (indented, one number a line), no number parsed; else the answer parsed.
    const texts = looksLikeObject(body) ? vectorTexts(body, VALUES) : null;
    if (texts && texts.length > 0 && texts.every((vector) => 'json' in vector)) return { vectors: texts, promptTokens: undefined };
    const answer = bodyObject(body);
    if (!answer || !Array.isArray(answer.embeddings)) return 'not_json';
    const vectors: number[][] = [];
    for (const item of answer.embeddings) {
      if (!isRecord(item) || !Array.isArray(item.values) || !item.values.every((value) => typeof value === 'number')) return 'not_json';
      vectors.push(item.values as number[]);
    }
    return { vectors, promptTokens: undefined };
  },
};

/** `:embedContent` and `:batchEmbedContents` under /v1beta and /v1, and `gemini` tiers' `:batchEmbedContents`. */
export const geminiEmbeddings: ProtocolEmbeddings = {
  endpoints: (['/v1beta', '/v1'] as const).flatMap((version) => [
    { path: `${version}/models/{model}:embedContent`, client: embedContentClient },
    { path: `${version}/models/{model}:batchEmbedContents`, client: batchClient },
  ]),
  wire: geminiEmbeddingWire,
};
