import type { Socket } from 'node:net';
import { FakeUpstream, type ScriptContext } from './fake-upstream.js';

/**
 * A fake llama.cpp `llama-server` (commit de3ff81) that does on the wire what the real one
 * does to a proxy:
 * - streamed answers advertise `Keep-Alive: timeout=5, max=100` yet the socket is closed after
 *   every stream (the real one sends its FIN ≈ 0.25 ms after the last chunk);
 * - while loading: 503 `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`
 *   on every endpoint, the port open from the start;
 * - `/health` 200 `{"status":"ok"}` once loaded; `/v1/models` lists one model (`tiny`), and any
 *   `model` name is served;
 * - a prompt over the context: 400 `exceed_context_size_error` with `Connection: close`;
 * - an image without a vision projector: 500 `image input is not supported - hint: …`;
 * - usage with `prompt_tokens_details.cached_tokens` (the common prefix with the last prompt),
 *   and its `timings` (`cache_n`, `prompt_n`, `predicted_n`, …) beside it: on the usage chunk
 *   of a stream that asked for usage, on the finish chunk of one that did not, and at the end
 *   of a whole answer; chunks and answers key for key as the real server writes them.
 */
export interface FakeLlamaOptions {
  /**
   * How a socket is closed after a stream. `on-reuse` (default): left open, and destroyed
   * unanswered when the next request arrives on it — the race the real server loses to a
   * quick client, made certain. A number: destroyed that many ms after the stream ended.
   */
  closeAfterStream?: 'on-reuse' | number;
  /** Answer 503 Loading model until `loaded()` is called. */
  loading?: boolean;
  /** Context size in tokens (a token: 4 characters of message content here). */
  contextTokens?: number;
  /** Content words of each streamed answer. */
  words?: string[];
  /** Delay before the first token, ms. */
  ttftMs?: number;
  /** An older build: no `prompt_tokens_details` in its usage, its cache figure only in `timings`. */
  noCacheDetails?: boolean;
}

export const LOADING_BODY = { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } };
export const IMAGE_NOT_SUPPORTED = 'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj';

const CLOSE_ON_REUSE = Symbol('closeOnReuse');
type MarkedSocket = Socket & { [CLOSE_ON_REUSE]?: boolean };

export class FakeLlamaServer {
  /** Requests that arrived on a socket the server had closed (they got no answer). */
  staleHits = 0;
  /** Chat requests answered with a stream. */
  streams = 0;
  private loadingNow: boolean;
  private lastPrompt = '';

  private constructor(
    readonly fake: FakeUpstream,
    private readonly opts: FakeLlamaOptions,
  ) {
    this.loadingNow = opts.loading ?? false;
    fake.always((ctx) => this.handle(ctx));
  }

  static async start(opts: FakeLlamaOptions = {}): Promise<FakeLlamaServer> {
    return new FakeLlamaServer(await FakeUpstream.start(), opts);
  }

  get url(): string {
    return this.fake.url;
  }

  get requests() {
    return this.fake.requests;
  }

  loaded(): void {
    this.loadingNow = false;
  }

  close(): Promise<void> {
    return this.fake.close();
  }

  private async handle(ctx: ScriptContext): Promise<void> {
    const socket = ctx.req.socket as MarkedSocket;
    if (socket[CLOSE_ON_REUSE]) {
      this.staleHits++;
      socket.destroy();
      return;
    }
    if (this.loadingNow) return ctx.json(503, LOADING_BODY);
    const path = (ctx.req.url ?? '').split('?')[0];
    if (ctx.req.method === 'GET') {
      if (path === '/health' || path === '/v1/health') return ctx.json(200, { status: 'ok' });
      if (path === '/v1/models' || path === '/models') {
        return ctx.json(200, { models: [{ name: 'tiny', model: 'tiny' }], object: 'list', data: [{ id: 'tiny', object: 'model', owned_by: 'llamacpp' }] });
      }
      return ctx.json(404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } });
    }
    const prompt = promptText(ctx.body);
    const tokens = Math.ceil(prompt.length / 4);
    if (this.opts.contextTokens !== undefined && tokens >= this.opts.contextTokens) {
      const n = this.opts.contextTokens;
      return ctx.json(
        400,
        {
          error: {
            code: 400,
            message: `request (${tokens} tokens) exceeds the available context size (${n} tokens), try increasing it`,
            type: 'exceed_context_size_error',
            n_prompt_tokens: tokens,
            n_ctx: n,
          },
        },
        { connection: 'close' },
      );
    }
    if (hasImage(ctx.body)) return ctx.json(500, { error: { code: 500, message: IMAGE_NOT_SUPPORTED, type: 'server_error' } }, { connection: 'close' });
    const cached = commonPrefix(prompt, this.lastPrompt);
    this.lastPrompt = prompt;
    const details = this.opts.noCacheDetails !== true;
    if (ctx.body.stream !== true) return ctx.json(200, completionBody(tokens, cached, this.opts.words ?? ['hi'], details));

    this.streams++;
    ctx.res.setHeader('keep-alive', 'timeout=5, max=100'); // as cpp-httplib words it
    ctx.startStream();
    if (this.opts.ttftMs) await ctx.wait(this.opts.ttftMs);
    const words = this.opts.words ?? ['hello', ' there'];
    ctx.event(llamaChunk([{ finish_reason: null, index: 0, delta: { role: 'assistant', content: null } }]));
    for (const word of words) ctx.event(llamaChunk([{ finish_reason: null, index: 0, delta: { content: word } }]));
    const asked = (ctx.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const finish = llamaChunk([{ finish_reason: 'stop', index: 0, delta: {} }]);
    ctx.event(asked ? finish : { ...finish, timings: timings(tokens, cached, words.length) });
    if (asked) ctx.event({ ...llamaChunk([]), usage: usage(tokens, cached, words.length, details), timings: timings(tokens, cached, words.length) });
    ctx.done();
    this.closeAfter(socket, ctx);
  }

  private closeAfter(socket: MarkedSocket, ctx: ScriptContext): void {
    const how = this.opts.closeAfterStream ?? 'on-reuse';
    if (how === 'on-reuse') socket[CLOSE_ON_REUSE] = true;
    else ctx.res.once('finish', () => setTimeout(() => socket.destroy(), how));
  }
}

function promptText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages
    .map((m) => {
      const content = (m as { content?: unknown }).content;
      if (typeof content === 'string') return content;
      return Array.isArray(content) ? content.map((p) => (p as { text?: string }).text ?? '').join('') : '';
    })
    .join('\n');
}

function hasImage(body: Record<string, unknown>): boolean {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages.some(
    (m) =>
      Array.isArray((m as { content?: unknown }).content) && (m as { content: unknown[] }).content.some((p) => (p as { type?: string }).type === 'image_url'),
  );
}

/** Tokens of the prompt cache a new prompt can reuse: its common prefix with the last one. */
function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return Math.floor(i / 4);
}

function usage(prompt: number, cached: number, completion: number, details = true): Record<string, unknown> {
  const counts = { completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion };
  return details ? { ...counts, prompt_tokens_details: { cached_tokens: cached } } : counts;
}

/** llama-server's own figures: `cache_n` read from the slot's KV cache, `prompt_n` evaluated now, `predicted_n` generated. */
export function timings(prompt: number, cached: number, predicted: number): Record<string, number> {
  const evaluated = prompt - cached;
  return {
    cache_n: cached,
    prompt_n: evaluated,
    prompt_ms: evaluated * 2.15,
    prompt_per_token_ms: 2.15,
    prompt_per_second: 464.73,
    predicted_n: predicted,
    predicted_ms: predicted * 13.95,
    predicted_per_token_ms: 13.95,
    predicted_per_second: 71.69,
  };
}

/** A stream chunk, key for key as llama-server (de3ff81) writes it. */
export function llamaChunk(choices: unknown[]): Record<string, unknown> {
  return {
    choices,
    created: 1796522010,
    id: 'chatcmpl-SHrGA1QQ8Oy3y3O8s2FrAoqUrXHaubAO',
    model: 'tiny',
    system_fingerprint: 'b1-de3ff81',
    object: 'chat.completion.chunk',
  };
}

/** A whole answer, key for key as llama-server writes it: `timings` last, after the id. */
function completionBody(prompt: number, cached: number, words: string[], details: boolean): Record<string, unknown> {
  return {
    choices: [{ finish_reason: 'stop', index: 0, message: { role: 'assistant', content: words.join('') } }],
    created: 1796522010,
    model: 'tiny',
    system_fingerprint: 'b1-de3ff81',
    object: 'chat.completion',
    usage: usage(prompt, cached, words.length, details),
    id: 'chatcmpl-sQaDhoMLWVjb5d0e9HUWpXt4KH1uOSi2',
    timings: timings(prompt, cached, words.length),
  };
}
