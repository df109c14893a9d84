import type { IncomingHttpHeaders } from 'node:http';
import type { RequestTarget } from '../core/client-codec.js';
import { clientRequest } from '../core/client-request.js';
import type { ClientCredential } from '../core/credential.js';
import type { EmbeddingAsk, EmbeddingInput } from '../core/embedding-codec.js';
import type { ClientProtocol } from '../core/names.js';
import { textRequest } from '../core/neutral.js';
import type { ClientRequest, ParseResult } from '../core/types.js';

/**
 * `input` as OpenAI takes it: a text, a list of texts, a list of token ids, or a list of such
 * lists (`tokens: false`: texts only, as Ollama takes them). A message for a 400 otherwise.
 */
export function readInputs(value: unknown, { tokens }: { tokens: boolean }): EmbeddingInput[] | string {
  const expected = tokens ? 'a string, an array of strings, an array of token ids or an array of arrays of token ids' : 'a string or an array of strings';
  if (typeof value === 'string') return value === '' ? 'input must not be empty' : [value];
  if (!Array.isArray(value)) return value === undefined ? `input is required: ${expected}` : `input must be ${expected}`;
  if (value.length === 0) return 'input must not be an empty array';
  if (tokens && typeof value[0] === 'number') return isTokenIds(value) ? [value] : `input must be ${expected} (token ids are integers ≥ 0)`;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item === 'string') {
      if (item === '') return `input[${i}] must not be an empty string`;
    } else if (!tokens || !Array.isArray(item)) {
      return `input[${i}] must be ${tokens ? 'a string or an array of token ids' : 'a string'}`;
    } else if (item.length === 0 || !isTokenIds(item)) {
      return `input[${i}] must be a non-empty array of token ids (integers ≥ 0)`;
    }
  }
  return value as EmbeddingInput[];
}

function isTokenIds(value: readonly unknown[]): value is number[] {
  for (let i = 0; i < value.length; i++) {
    const id = value[i];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) return false;
  }
  return true;
}

/**
 * Whether a relayed body's own `input` is what a request carries: the whole batch, uncut (the
 * client's text is then sent as it came); else the request is sent its part's inputs.
 */
export function sendsOwnInput(input: unknown, inputs: readonly EmbeddingInput[]): boolean {
  if (typeof input === 'string' || (Array.isArray(input) && typeof input[0] === 'number')) return inputs.length === 1 && inputs[0] === input;
  return Array.isArray(input) && input.length === inputs.length && input.every((item, i) => item === inputs[i]);
}

/** A `dimensions` field: absent, or a width of at least 1; a message otherwise. */
export function readDimensions(value: unknown): number | undefined | string {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : 'dimensions must be an integer ≥ 1';
}

/** The inputs as one text, for what counts a request's tokens (estimates, budgets, tpm): token ids as numbers. */
export function inputsText(inputs: readonly EmbeddingInput[]): string {
  return inputs.map((input) => (typeof input === 'string' ? input : input.join(' '))).join('\n');
}

/**
 * A validated embeddings request. Its neutral form is its inputs as one text with no answer
 * tokens: what the rest of llm-route counts a prompt from (budgets, tpm, estimates, rules). It
 * is never sent as a chat: an embeddings request goes to its tiers through the embedding codecs.
 */
export function embeddingRequest(
  protocol: ClientProtocol,
  body: Record<string, unknown>,
  model: string,
  ask: EmbeddingAsk,
  headers: IncomingHttpHeaders,
  credential: ClientCredential | undefined,
): ClientRequest {
  const request = clientRequest(protocol, body, { model, stream: false }, headers, () => textRequest(inputsText(ask.inputs), 0), credential);
  return { ...request, operation: 'embeddings', embedding: ask };
}

/**
 * A parse of an embeddings body: its route is the model its path names (Gemini's, through a path
 * template), else its `model` (a string, when it names one: the default route otherwise); the
 * endpoint's own ask.
 */
export function parseEmbeddings(
  protocol: ClientProtocol,
  read: (body: Record<string, unknown>, route: string) => EmbeddingAsk | string,
  body: unknown,
  headers: IncomingHttpHeaders,
  credential: ClientCredential | undefined,
  target?: RequestTarget,
): ParseResult {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { ok: false, message: 'the request body must be a JSON object' };
  const fields = body as Record<string, unknown>;
  const model = target?.model ?? fields.model;
  if (typeof model !== 'string' || model === '') return { ok: false, message: 'model is required: the route to embed with' };
  const ask = read(fields, model);
  if (typeof ask === 'string') return { ok: false, message: ask };
  return { ok: true, request: embeddingRequest(protocol, fields, model, ask, headers, credential) };
}
