import type { FakeUpstream, Script, ScriptContext, SeenRequest } from './fake-upstream.js';

/**
 * A fake Gemini API (generativelanguage.googleapis.com) on a FakeUpstream: `GET /v1beta/models`
 * (paginated) and `GET /v1beta/models/{model}` from a table, as discovery and health checks ask
 * them; every `POST …:method` runs the next script. Bodies as Google writes them: stream chunks
 * as single-line JSON with a space after each colon (`{"candidates": [{"content": {…`), each an
 * SSE `data:` ended by CRLF CRLF; whole answers and errors pretty-printed; usageMetadata,
 * modelVersion and responseId on every chunk.
 */
export class FakeGemini {
  private queue: Script[] = [];
  private fallback: Script = (ctx) => geminiError(ctx, 500, 'INTERNAL', 'no script for this request');
  /** `x-goog-api-key` values the fake accepts (none: any). */
  keys: string[] = [];

  constructor(
    readonly fake: FakeUpstream,
    readonly models: GeminiModel[] = [geminiModel('gemini-2.5-flash')],
    /** Models per page of the list (Google's pageSize). */
    readonly pageSize = 50,
  ) {
    fake.always((ctx) => this.answer(ctx));
  }

  /** The base URL a `type: gemini` provider names (no /v1beta). */
  get url(): string {
    return `http://127.0.0.1:${this.fake.port}`;
  }

  /** The model requests it got (`…:streamGenerateContent`, `…:generateContent`, `…:countTokens`), not the GETs of checks. */
  get calls(): SeenRequest[] {
    return this.fake.requests.filter((request) => request.url.includes(':'));
  }

  next(...scripts: Script[]): this {
    this.queue.push(...scripts);
    return this;
  }

  always(script: Script): this {
    this.fallback = script;
    return this;
  }

  private async answer(ctx: ScriptContext): Promise<void> {
    const key = ctx.req.headers['x-goog-api-key'];
    if (this.keys.length > 0 && (typeof key !== 'string' || !this.keys.includes(key))) return badKey(ctx);
    const url = new URL(ctx.req.url ?? '/', 'http://fake');
    if (ctx.req.method === 'GET' && url.pathname === '/v1beta/models') return this.list(ctx, url);
    if (ctx.req.method === 'GET' && url.pathname.startsWith('/v1beta/models/')) {
      const model = this.models.find((m) => m.name === `models/${url.pathname.slice('/v1beta/models/'.length)}`);
      return model ? googlePretty(ctx, 200, model) : notFound(ctx, url.pathname.slice('/v1beta/'.length));
    }
    // A model Gemini does not have is a 404 on any method, before any script.
    const resource = /^\/v1beta\/(models\/[^:]+):/.exec(url.pathname)?.[1];
    if (resource !== undefined && !this.models.some((m) => m.name === resource)) return notFound(ctx, resource);
    await (this.queue.shift() ?? this.fallback)(ctx);
  }

  private list(ctx: ScriptContext, url: URL): void {
    const start = Number(url.searchParams.get('pageToken') ?? '0');
    const size = Math.min(this.pageSize, Number(url.searchParams.get('pageSize') ?? '50'));
    const page = this.models.slice(start, start + size);
    const body: Record<string, unknown> = page.length > 0 ? { models: page } : {};
    if (start + size < this.models.length) body.nextPageToken = String(start + size);
    googlePretty(ctx, 200, body);
  }
}

export type GeminiModel = Record<string, unknown> & { name: string };

/** A model's entry as `GET /v1beta/models/{model}` answers it. */
export function geminiModel(id: string, inputTokenLimit = 1_048_576, outputTokenLimit = 65_536): GeminiModel {
  return {
    name: `models/${id}`,
    version: '001',
    displayName: id.replace(/^gemini/, 'Gemini').replace(/-/g, ' '),
    description: `Stable version of ${id}.`,
    inputTokenLimit,
    outputTokenLimit,
    supportedGenerationMethods: ['generateContent', 'countTokens', 'createCachedContent', 'batchGenerateContent'],
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  };
}

/** An embedding model's entry, as Google lists gemini-embedding-001: its input limit, and embedding methods only. */
export function geminiEmbeddingModel(id: string, inputTokenLimit = 2048): GeminiModel {
  return {
    name: `models/${id}`,
    version: '001',
    displayName: 'Gemini Embedding 001',
    description: 'Obtain a distributed representation of a text.',
    inputTokenLimit,
    outputTokenLimit: 1,
    supportedGenerationMethods: ['embedContent', 'countTextTokens', 'countTokens', 'asyncBatchEmbedContent'],
  };
}

/** JSON as Google's stream chunks write it: a space after each colon, none after a comma. */
export function googleJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(googleJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.map(([key, v]) => `${JSON.stringify(key)}: ${googleJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A whole answer as Google writes it: pretty-printed JSON (two-space indent, one number a line), with its headers. */
export function googlePretty(ctx: ScriptContext, status: number, value: unknown): void {
  ctx.res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer', server: 'scaffolding on HTTPServer2' });
  ctx.res.end(`${JSON.stringify(value, null, 2)}\n`);
}

/** Google's error body: `{"error": {"code", "message", "status", "details"?}}`, pretty-printed. */
export function geminiError(ctx: ScriptContext, code: number, status: string, message: string, details?: unknown[]): void {
  googlePretty(ctx, code, { error: { code, message, status, ...(details ? { details } : {}) } });
}

export function badKey(ctx: ScriptContext): void {
  geminiError(ctx, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
    { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
  ]);
}

function notFound(ctx: ScriptContext, resource: string): void {
  geminiError(
    ctx,
    404,
    'NOT_FOUND',
    `${resource} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
  );
}

/** 429 with QuotaFailure, Help and RetryInfo (`retryDelay`), as a spent quota answers. */
export function quotaExhausted(ctx: ScriptContext, retryDelay = '26s'): void {
  geminiError(
    ctx,
    429,
    'RESOURCE_EXHAUSTED',
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
    [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
          },
        ],
      },
      {
        '@type': 'type.googleapis.com/google.rpc.Help',
        links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
    ],
  );
}

export const overloaded: Script = (ctx) => geminiError(ctx, 503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');

export interface Usage {
  prompt: number;
  candidates?: number;
  thoughts?: number;
  cached?: number;
}

/** `usageMetadata` as Gemini counts: candidates and thoughts apart, the prompt's modalities detailed. */
export function usageMetadata(usage: Usage): Record<string, unknown> {
  const total = usage.prompt + (usage.candidates ?? 0) + (usage.thoughts ?? 0);
  return {
    promptTokenCount: usage.prompt,
    candidatesTokenCount: usage.candidates,
    totalTokenCount: total,
    cachedContentTokenCount: usage.cached,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: usage.prompt }],
    thoughtsTokenCount: usage.thoughts,
  };
}

export const RESPONSE_ID = 'Zr1baKjJMZ3Gz7IPmc_F-Qg';

/** One chunk of a streamed answer: the candidate's parts, its finishReason when it ends, the usage so far. */
export function geminiChunk(parts: unknown[], usage: Usage, finishReason?: string): Record<string, unknown> {
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
    usageMetadata: usageMetadata(usage),
    modelVersion: 'gemini-2.5-flash',
    responseId: RESPONSE_ID,
  };
}

/** 200 and SSE headers, as Google sends them for `alt=sse`. */
export function startGeminiStream(ctx: ScriptContext): void {
  ctx.res.writeHead(200, {
    'content-type': 'text/event-stream',
    'content-disposition': 'attachment',
    vary: 'Origin, X-Origin, Referer',
    server: 'scaffolding on HTTPServer2',
  });
  ctx.res.flushHeaders();
}

/** One SSE event of Google's: `data: <chunk>` and CRLF CRLF. */
export function geminiEvent(ctx: ScriptContext, chunk: unknown): void {
  ctx.raw(`data: ${googleJson(chunk)}\r\n\r\n`);
}

/** A stream of these chunks, `delayMs` apart, then the end. */
export function geminiStream(chunks: Array<Record<string, unknown>>, opts: { delayMs?: number } = {}): Script {
  return async (ctx) => {
    startGeminiStream(ctx);
    for (const chunk of chunks) {
      if (opts.delayMs) await ctx.wait(opts.delayMs);
      geminiEvent(ctx, chunk);
    }
    ctx.res.end();
  };
}

/** A text answer streamed word by word, the last chunk with STOP and the final counts. */
export function geminiTextStream(words: string[], usage: Usage = { prompt: 8, candidates: words.length }): Script {
  return geminiStream(
    words.map((word, i) =>
      i === words.length - 1 ? geminiChunk([{ text: word }], usage, 'STOP') : geminiChunk([{ text: word }], { prompt: usage.prompt, candidates: i + 1 }),
    ),
  );
}

/** A whole `generateContent` answer. */
export function geminiAnswer(parts: unknown[], usage: Usage, finishReason = 'STOP'): Record<string, unknown> {
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
    usageMetadata: JSON.parse(JSON.stringify(usageMetadata(usage))),
    modelVersion: 'gemini-2.5-flash',
    responseId: RESPONSE_ID,
  };
}

export function geminiWhole(parts: unknown[], usage: Usage, finishReason = 'STOP'): Script {
  return (ctx) => googlePretty(ctx, 200, geminiAnswer(parts, usage, finishReason));
}
