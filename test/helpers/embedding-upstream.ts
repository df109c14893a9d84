import type { Script, ScriptContext } from './fake-upstream.js';
import { geminiError, googlePretty } from './gemini-upstream.js';

/**
 * Scripts for a FakeUpstream playing embeddings servers with their exact bodies: llama.cpp's
 * llama-server (`/v1/embeddings`: model (the request's), object, usage, then data, each entry's
 * `encoding_format: base64` last when asked), OpenAI's own (`object` first) and Ollama's `/api/embed`
 * (Go's field order: model, embeddings, the durations, prompt_eval_count). Each input's vector
 * is a function of its text (`vectorFor`), with values float32 holds exactly, so a test can
 * tell which vector answers which input, in which order, after any split, join and translation.
 */

/** A text's vector of `width` numbers: each a multiple of 1/1024 (exact in float32 and in JSON). */
export function vectorFor(text: string, width: number, salt = 0): number[] {
  let hash = 2166136261 ^ salt;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  const vector: number[] = [];
  for (let i = 0; i < width; i++) {
    hash = Math.imul(hash ^ (i + 1), 16777619);
    vector.push(((hash >>> 0) % 2048) / 1024 - 1);
  }
  return vector;
}

/** Base64 of a vector's little-endian float32s, as OpenAI and llama-server write it. */
export function vectorBase64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString('base64');
}

/** The texts a request asked to embed (`input` of either API; Ollama's older `prompt`). */
export function inputsOf(body: Record<string, unknown>): string[] {
  const input = body.input ?? body.prompt;
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [];
  if (typeof input[0] === 'number') return [input.join(',')];
  return input.map((item) => (typeof item === 'string' ? item : (item as number[]).join(',')));
}

/** Tokens a fake reads of a text: one per 4 characters, at least one. */
export function fakeTokens(texts: readonly string[]): number {
  return texts.reduce((sum, text) => sum + Math.max(1, Math.ceil(text.length / 4)), 0);
}

export interface EmbeddingFake {
  /** The vectors' width (default 8). */
  width?: number;
  /** Vectors of another model: the same texts give other numbers. */
  salt?: number;
  /** The model the answer names (default: the request's). */
  model?: string;
  /** Answer without usage (a server that reports none). */
  noUsage?: boolean;
}

/** llama-server's `/v1/embeddings` answer to the request this script gets. */
export function llamaEmbeddings(options: EmbeddingFake = {}): Script {
  return (ctx) => {
    const texts = inputsOf(ctx.body);
    const base64 = ctx.body.encoding_format === 'base64';
    const data = texts.map((text, index) => {
      const vector = vectorFor(text, options.width ?? 8, options.salt);
      return base64
        ? { embedding: vectorBase64(vector), encoding_format: 'base64', index, object: 'embedding' }
        : { embedding: vector, index, object: 'embedding' };
    });
    const tokens = fakeTokens(texts);
    const usage = options.noUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } };
    answer(ctx, { data, model: options.model ?? ctx.body.model, object: 'list', ...usage });
  };
}

/** OpenAI's own `/v1/embeddings` answer (its key order; base64 entries without `encoding_format`). */
export function openaiEmbeddings(options: EmbeddingFake = {}): Script {
  return (ctx) => {
    const texts = inputsOf(ctx.body);
    const base64 = ctx.body.encoding_format === 'base64';
    const data = texts.map((text, index) => {
      const vector = vectorFor(text, options.width ?? 8, options.salt);
      return { object: 'embedding', index, embedding: base64 ? vectorBase64(vector) : vector };
    });
    const tokens = fakeTokens(texts);
    answer(ctx, { object: 'list', data, model: options.model ?? ctx.body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };
}

/** Ollama's `/api/embed` answer. */
export function ollamaEmbed(options: EmbeddingFake = {}): Script {
  return (ctx) => {
    const texts = inputsOf(ctx.body);
    const embeddings = texts.map((text) => vectorFor(text, options.width ?? 8, options.salt));
    const count = options.noUsage ? {} : { prompt_eval_count: fakeTokens(texts) };
    answer(ctx, { model: options.model ?? ctx.body.model, embeddings, total_duration: 14143917, load_duration: 1019500, ...count });
  };
}

/** The text of one of Gemini's EmbedContentRequests: its content's text parts, joined by a newline (as llm-route reads them). */
export function geminiRequestText(request: unknown): string {
  const parts = (request as { content?: { parts?: { text?: string }[] } }).content?.parts ?? [];
  return parts.map((part) => part.text ?? '').join('\n');
}

/**
 * Gemini's `:batchEmbedContents` (run by a FakeGemini, which has answered 404 for a model it
 * does not list): what Google refuses, a batch of over 100 requests (its exact 400) and a request
 * naming another model than the path's (Google: it must match), else `{"embeddings": [{"values":
 * […]}]}` pretty-printed, no usage; each vector `outputDimensionality` wide when asked.
 */
export function geminiBatchEmbed(options: EmbeddingFake = {}): Script {
  return (ctx) => {
    const requests = (ctx.body.requests ?? []) as Record<string, unknown>[];
    if (requests.length > 100) {
      return geminiError(ctx, 400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch\n');
    }
    const path = /\/v1beta\/(models\/[^:]+):batchEmbedContents$/.exec(ctx.req.url ?? '')?.[1];
    const other = requests.findIndex((request) => request.model !== path);
    if (path === undefined || other !== -1) {
      return geminiError(
        ctx,
        400,
        'INVALID_ARGUMENT',
        `* BatchEmbedContentsRequest.requests[${other}].model: the model must match the batch's model ${path}\n`,
      );
    }
    const embeddings = requests.map((request) => {
      const width = typeof request.outputDimensionality === 'number' ? request.outputDimensionality : (options.width ?? 8);
      return { values: vectorFor(geminiRequestText(request), width, options.salt) };
    });
    googlePretty(ctx, 200, { embeddings });
  };
}

/** llama-server started without `--embeddings`: its exact 501. */
export function llamaEmbeddingsOff(ctx: ScriptContext): void {
  answer(ctx, { error: { code: 501, message: 'This server does not support embeddings. Start it with `--embeddings`', type: 'not_supported_error' } }, 501);
}

function answer(ctx: ScriptContext, value: unknown, status = 200): void {
  const body = JSON.stringify(value);
  ctx.res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  ctx.res.end(body);
}
