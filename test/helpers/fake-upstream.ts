import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A scriptable OpenAI-compatible upstream on port 0. Each request runs a script that a test
 * writes chunk by chunk; the fake records every request and when each socket closed, so a
 * test can check that llm-route aborted an upstream and closed its socket.
 */
export interface SeenRequest {
  /** The request target as it came (path and query). */
  url: string;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  /** performance.now() when the request arrived. */
  at: number;
  socketId: number;
}

export interface ScriptContext {
  req: IncomingMessage;
  res: ServerResponse;
  body: Record<string, unknown>;
  /** Index of this request (0-based) at this fake. */
  index: number;
  /** Resolves when the client side closed the connection (or the request ended). */
  closed: Promise<void>;
  isClosed(): boolean;
  /** 200 + SSE headers, flushed. */
  startStream(): void;
  /** One SSE event: an object is JSON-encoded, a string is sent as the data as-is. */
  event(data: unknown): void;
  raw(text: string): void;
  role(): void;
  content(text: string): void;
  finish(reason?: string): void;
  usage(prompt: number, completion: number): void;
  done(): void;
  json(status: number, value: unknown, headers?: Record<string, string>): void;
  error(status: number, message: string, extra?: { code?: string; type?: string; headers?: Record<string, string> }): void;
  wait(ms: number): Promise<void>;
  /** Destroys the socket (a reset / break). */
  destroy(): void;
}

export type Script = (ctx: ScriptContext) => void | Promise<void>;

let nextSocketId = 1;

export class FakeUpstream {
  readonly requests: SeenRequest[] = [];
  /** socketId → performance.now() at close. */
  readonly socketClosedAt = new Map<number, number>();
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private queue: Script[] = [];
  private fallback: Script = (ctx) => ctx.error(500, 'no script for this request');
  port = 0;

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket: Socket & { fakeId?: number }) => {
      socket.fakeId = nextSocketId++;
      this.sockets.add(socket);
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.socketClosedAt.set(socket.fakeId as number, performance.now());
      });
    });
  }

  static async start(): Promise<FakeUpstream> {
    const fake = new FakeUpstream();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** The script for every request not covered by `next`. */
  always(script: Script): this {
    this.fallback = script;
    return this;
  }

  /** Scripts for the next requests, in order. */
  next(...scripts: Script[]): this {
    this.queue.push(...scripts);
    return this;
  }

  get openSockets(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // keep {}: a script may still answer
    }
    const socket = req.socket as Socket & { fakeId?: number };
    const index = this.requests.length;
    this.requests.push({ url: req.url ?? '', body, headers: req.headers, at: performance.now(), socketId: socket.fakeId ?? 0 });
    const script = this.queue.shift() ?? this.fallback;
    let closed = false;
    const closedPromise = new Promise<void>((resolve) =>
      res.once('close', () => {
        closed = true;
        resolve();
      }),
    );
    const write = (text: string): void => {
      if (!closed) res.write(text);
    };
    const ctx: ScriptContext = {
      req,
      res,
      body,
      index,
      closed: closedPromise,
      isClosed: () => closed,
      startStream: () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
      },
      event: (data) => write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`),
      raw: write,
      role: () => ctx.event(chunk({ role: 'assistant', content: '' })),
      content: (text) => ctx.event(chunk({ content: text })),
      finish: (reason = 'stop') => ctx.event(chunk({}, reason)),
      usage: (prompt, completion) =>
        ctx.event({ ...chunkBase(), choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }),
      done: () => {
        write('data: [DONE]\n\n');
        res.end();
      },
      json: (status, value, headers = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      },
      error: (status, message, extra = {}) => {
        ctx.json(status, { error: { message, type: extra.type ?? 'error', code: extra.code ?? null } }, extra.headers);
      },
      wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      destroy: () => req.socket.destroy(),
    };
    try {
      await script(ctx);
    } catch (err) {
      if (!res.headersSent) ctx.error(500, `script failed: ${(err as Error).message}`);
      else res.destroy();
    }
  }
}

function chunkBase(): Record<string, unknown> {
  return { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1700000000, model: 'fake-model' };
}

export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return { ...chunkBase(), choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

/** A whole non-streaming completion. */
export function completion(text: string, usage = { prompt_tokens: 5, completion_tokens: 3 }): Record<string, unknown> {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1700000000,
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** A healthy stream: role, the words, finish, usage when asked, [DONE]. */
export function healthyStream(words: string[], opts: { delayMs?: number } = {}): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.role();
    for (const word of words) {
      if (opts.delayMs) await ctx.wait(opts.delayMs);
      ctx.content(word);
    }
    ctx.finish();
    const options = ctx.body.stream_options as { include_usage?: boolean } | undefined;
    if (options?.include_usage) ctx.usage(7, words.length);
    ctx.done();
  };
}

// ---- upstream misbehaviours --------------------------------------------------------

/** An event marked as coming from `tag` (in the chunk id), so a test can prove it never reached the client. */
export function taggedChunk(tag: string, delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { ...chunk(delta, finish), id: `chatcmpl-${tag}` };
}

/** 200 + SSE headers, then nothing until the proxy hangs up. */
export const headersThenSilence: Script = async (ctx) => {
  ctx.startStream();
  await ctx.closed;
};

/** A role-only chunk (no content: does not commit), then silence. */
export function roleThenSilence(tag: string): Script {
  return async (ctx) => {
    ctx.startStream();
    ctx.event(taggedChunk(tag, { role: 'assistant', content: '' }));
    await ctx.closed;
  };
}

/** Reads the request, never answers. */
export const neverAnswer: Script = async (ctx) => {
  await ctx.closed;
};

/** Destroys the socket at once: a reset before any response header. */
export const resetAtOnce: Script = (ctx) => ctx.destroy();
