import { isRecord } from '../../util/is-record.js';
import type { EmbeddingAsk } from '../core/embedding-codec.js';
import { readDimensions } from '../embeddings/inputs.js';

/*
 * A Gemini client's embeddings body read (docs/embeddings.md): `:embedContent`'s is one
 * EmbedContentRequest (`content`, `taskType`, `title`, `outputDimensionality`, `model`),
 * `:batchEmbedContents`' a list of them (`requests`). Each request is one input: its content's
 * text. `taskType` and `title` mean something to Gemini's models only: they stay in the body,
 * which a `gemini` tier is sent as the client wrote it.
 */

/** An EmbedContentRequest's fields besides its content that must be text when given. */
const TEXT_FIELDS = ['taskType', 'title'] as const;

/** `:embedContent`'s ask: its body is the one request. */
export function readEmbedContent(body: Record<string, unknown>, route: string): EmbeddingAsk | string {
  return readRequests([body], route, () => '');
}

/** `:batchEmbedContents`' ask: one input per request, in order. */
export function readBatchEmbedContents(body: Record<string, unknown>, route: string): EmbeddingAsk | string {
  const requests = body.requests;
  if (!Array.isArray(requests)) return 'requests is required: a list of EmbedContentRequest ({"content": {"parts": [{"text": "…"}]}})';
  if (requests.length === 0) return 'requests must not be empty';
  return readRequests(requests, route, (i) => `requests[${i}]`);
}

/** The requests of a client's body, as sent: a batch's list, or `:embedContent`'s body itself. */
export function clientRequests(body: Record<string, unknown>): readonly unknown[] {
  return Array.isArray(body.requests) ? body.requests : [body];
}

/** A Content's text: its text parts joined by a newline; a message when it is not a Content of text. */
export function contentText(content: unknown, at: string): string | { bad: string } {
  if (!isRecord(content)) return { bad: `${field(at, 'content')} is required: a Content with text parts ({"parts": [{"text": "…"}]})` };
  const parts = content.parts;
  if (!Array.isArray(parts) || parts.length === 0) return { bad: `${field(at, 'content.parts')} must be a non-empty list of parts` };
  const texts: string[] = [];
  for (let j = 0; j < parts.length; j++) {
    const part: unknown = parts[j];
    if (!isRecord(part) || typeof part.text !== 'string') {
      return { bad: `${field(at, `content.parts[${j}]`)} is not text: llm-route embeds text (images, files and other media are not carried)` };
    }
    texts.push(part.text);
  }
  const text = texts.join('\n');
  return text === '' ? { bad: `${field(at, 'content')} holds no text to embed` } : text;
}

function readRequests(requests: readonly unknown[], route: string, where: (i: number) => string): EmbeddingAsk | string {
  const inputs: string[] = [];
  let dimensions: number | undefined;
  for (let i = 0; i < requests.length; i++) {
    const request: unknown = requests[i];
    const at = where(i);
    if (!isRecord(request)) return `${at || 'the body'} must be an EmbedContentRequest object`;
    if (request.model !== undefined && !namesRoute(request.model, route)) {
      return `${field(at, 'model')} ${JSON.stringify(request.model)} is not the model in the path (models/${route}): each request names the path's model`;
    }
    const text = contentText(request.content, at);
    if (typeof text !== 'string') return text.bad;
    for (const key of TEXT_FIELDS) if (request[key] !== undefined && typeof request[key] !== 'string') return `${field(at, key)} must be a string`;
    const asked = readDimensions(request.outputDimensionality);
    if (typeof asked === 'string') return `${field(at, 'outputDimensionality')} must be an integer ≥ 1`;
    if (i > 0 && asked !== dimensions) {
      return `${field(at, 'outputDimensionality')} differs from requests[0]'s (${asked ?? 'none'}, ${dimensions ?? 'none'}): a batch's vectors are of one width`;
    }
    dimensions = asked;
    inputs.push(text);
  }
  // Cut to a tier's window, as Google's embedding models cut a text past their limit (Gemini's API has no field that refuses it).
  const ask: EmbeddingAsk = { inputs, encoding: 'float', truncate: true };
  if (dimensions !== undefined) ask.dimensions = dimensions;
  return ask;
}

/** A request's `model` names the path's route: written whole (`models/embed`) or bare. */
function namesRoute(model: unknown, route: string): boolean {
  return typeof model === 'string' && (model === route || model === `models/${route}`);
}

function field(at: string, name: string): string {
  return at === '' ? name : `${at}.${name}`;
}
