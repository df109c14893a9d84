import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { decodeSegment } from '../util/decode-segment.js';
import { isRecord } from '../util/is-record.js';
import type { MockOptions } from './options.js';
import { createRandom, forkRandom, type Random } from './random.js';

/**
 * The fault-injecting OpenAI-compatible upstream behind `llm-route mock`.
 * Per request, in order: fail (--fail-status), stall (headers, then silence), TTFT delay,
 * then content chunks paced by --tokens-per-s, some malformed, the socket broken (--die-rate, --die-after).
 */
export interface MockServer {
  /** Base URL for OpenAI clients, like http://127.0.0.1:PORT/v1. */
  url: string;
  port: number;
  /** Stops every timer, destroys every socket and stops listening. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const WORDS = 'hello from a simulated upstream: this answer streams one word per chunk so you can watch time to first token and failover happen live.'.split(
  ' ',
);

const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

// Everything after `"choices":[` of a chunk, prebuilt so a chunk is one string concatenation.
const ROLE_TAIL = '{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n';
const FINISH_TAIL = '{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n';
const MALFORMED_TAIL = '{"index":0,"delta":{"content":\n\n';
const DONE = 'data: [DONE]\n\n';

export async function startMock(opts: MockOptions): Promise<MockServer> {
  const dice = createRandom(opts.seed);
  const text = completionText(opts);
  const textJson = JSON.stringify(text.join(''));
  const contentTails = text.map((word) => `{"index":0,"delta":{"content":${JSON.stringify(word)}},"finish_reason":null}]}\n\n`);
  const nameJson = JSON.stringify(opts.name);
  const chunkGapMs = opts.tokensPerS > 0 ? 1000 / opts.tokensPerS : 0;
  const clocks = new Set<RequestClock>();
  let sequence = 0;

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/v1/chat/completions') {
      if (req.method !== 'POST') return sendError(res, 405, `${req.method} not allowed here: use POST`, 'invalid_request_error');
      return readJson(req, res, (body) => chat(body, res));
    }
    if (path === '/v1/models' || path.startsWith('/v1/models/')) {
      if (req.method !== 'GET') return sendError(res, 405, `${req.method} not allowed here: use GET`, 'invalid_request_error');
      const id = path === '/v1/models' ? undefined : decodeSegment(path.slice('/v1/models/'.length));
      return sendJson(res, 200, id === undefined ? { object: 'list', data: [modelEntry(opts.name)] } : modelEntry(id));
    }
    sendError(res, 404, `no route for ${req.method} ${path}`, 'invalid_request_error', 'not_found');
  });

  function chat(body: unknown, res: ServerResponse): void {
    const request = readChatRequest(body, opts.name);
    if (typeof request === 'string') return sendError(res, 400, request, 'invalid_request_error');
    const rng = forkRandom(dice);
    if (opts.failRate > 0 && rng() < opts.failRate) return sendFailure(res, opts);
    const stall = opts.stallRate > 0 && rng() < opts.stallRate;
    // Drawn only at a rate below 1, so a seeded run without --die-rate rolls the same dice as before.
    const dies = opts.dieRate >= 1 || (opts.dieRate > 0 && rng() < opts.dieRate);
    const dieAt = !dies ? Number.POSITIVE_INFINITY : (opts.dieAfter ?? Math.floor(rng() * opts.tokens));
    const ttftMs = opts.ttftMs.min + (opts.ttftMs.max > opts.ttftMs.min ? rng() * (opts.ttftMs.max - opts.ttftMs.min) : 0);

    const clock = new RequestClock();
    clocks.add(clock);
    // 'close' also fires when the client goes away mid-stream: nothing may be left scheduled.
    res.on('close', () => {
      clock.cancel();
      clocks.delete(clock);
    });

    const id = `chatcmpl-mock${++sequence}`;
    const created = Math.floor(Date.now() / 1000);
    const modelJson = JSON.stringify(request.model);
    const usage = `"usage":{"prompt_tokens":${request.promptTokens},"completion_tokens":${opts.tokens},"total_tokens":${request.promptTokens + opts.tokens}}`;

    if (!request.stream) {
      if (stall) return flushHeadersOnly(res, JSON_HEADERS);
      const body = `{"id":"${id}","object":"chat.completion","created":${created},"model":${modelJson},"system_fingerprint":${nameJson},"choices":[{"index":0,"message":{"role":"assistant","content":${textJson}},"logprobs":null,"finish_reason":"stop"}],${usage}}`;
      clock.after(ttftMs + Math.max(0, opts.tokens - 1) * chunkGapMs, () => {
        const breaks = dieAt <= opts.tokens;
        res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
        if (!breaks) return void res.end(body);
        res.write(body.slice(0, Math.floor(body.length / 2)));
        breakConnection(res);
      });
      return;
    }

    if (stall) return flushHeadersOnly(res, SSE_HEADERS);
    const prefix = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${modelJson},"system_fingerprint":${nameJson},"choices":[`;
    res.writeHead(200, SSE_HEADERS);
    res.write(prefix + ROLE_TAIL);
    const ending = prefix + FINISH_TAIL + (request.includeUsage ? `${prefix}],${usage}}\n\n` : '') + DONE;
    clock.after(ttftMs, () => streamContent(res, clock, rng, prefix, ending, dieAt));
  }

  function streamContent(res: ServerResponse, clock: RequestClock, rng: Random, prefix: string, ending: string, dieAt: number): void {
    const startedAt = performance.now();
    let sent = 0;
    const step = (): void => {
      if (res.destroyed) return;
      while (sent < opts.tokens && sent !== dieAt) {
        const malformed = opts.malformedRate > 0 && rng() < opts.malformedRate;
        const flushed = res.write(prefix + (malformed ? MALFORMED_TAIL : contentTails[sent]));
        sent++;
        if (sent === opts.tokens || sent === dieAt) break;
        if (!flushed) return void res.once('drain', step);
        if (chunkGapMs > 0) {
          // Paced against the first chunk's time, so timer lateness does not add up.
          const waitMs = startedAt + sent * chunkGapMs - performance.now();
          if (waitMs > 0) return clock.after(waitMs, step);
        }
      }
      if (sent === dieAt) breakConnection(res);
      else res.end(ending);
    };
    step();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve, reject) => {
      for (const clock of clocks) clock.cancel();
      clocks.clear();
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }));

  return { url: `http://${host}:${port}/v1`, port, close };
}

/** The single timer a request may have pending; cancelled when the client or the server goes. */
class RequestClock {
  private timer: NodeJS.Timeout | undefined;
  private cancelled = false;

  after(ms: number, run: () => void): void {
    if (this.cancelled) return;
    if (ms <= 0) return run();
    this.timer = setTimeout(run, ms);
  }

  cancel(): void {
    this.cancelled = true;
    clearTimeout(this.timer);
  }
}

interface ChatRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  promptTokens: number;
}

/** The few fields the mock reads, or a message saying why the body is not a chat request. */
function readChatRequest(body: unknown, fallbackModel: string): ChatRequest | string {
  if (!isRecord(body)) return 'the request body must be a JSON object';
  if (!Array.isArray(body.messages)) return 'messages: expected an array of chat messages';
  const streamOptions = body.stream_options;
  return {
    model: typeof body.model === 'string' ? body.model : fallbackModel,
    stream: body.stream === true,
    includeUsage: isRecord(streamOptions) && streamOptions.include_usage === true,
    promptTokens: body.messages.reduce((sum: number, message: unknown) => sum + countWords(message), 0) + toolTokens(body.tools),
  };
}

/** A rough token count: the words of a message's text content. */
function countWords(message: unknown): number {
  if (!isRecord(message)) return 0;
  const words = (text: unknown) => (typeof text === 'string' ? (text.match(/\S+/g)?.length ?? 0) : 0);
  const { content } = message;
  if (!Array.isArray(content)) return words(content);
  return content.reduce((sum: number, part: unknown) => sum + (isRecord(part) ? words(part.text) : 0), 0);
}

/**
 * A real server's chat template writes the tool definitions into the prompt, and its usage
 * counts them: about one token per 4 characters of their JSON. Without them an agent's prompt
 * (Codex sends ~18 KB of tools) reads far below what llm-route counted, and the mock looked like
 * a server that silently truncates (SPEC "Route by fit").
 */
function toolTokens(tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? Math.ceil(JSON.stringify(tools).length / 4) : 0;
}

/** One word per token; the first names the mock so a reader can tell who answered. */
function completionText(opts: MockOptions): string[] {
  return Array.from({ length: opts.tokens }, (_, i) => (i === 0 ? `[${opts.name}]` : ` ${WORDS[(i - 1) % WORDS.length]}`));
}

function readJson(req: IncomingMessage, res: ServerResponse, onBody: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return sendError(res, 413, `request body over ${MAX_BODY_BYTES} bytes`, 'invalid_request_error');
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      return sendError(res, 400, `invalid JSON body: ${(err as Error).message}`, 'invalid_request_error', 'invalid_json');
    }
    onBody(body);
  });
}

function sendFailure(res: ServerResponse, opts: MockOptions): void {
  const status = opts.failStatus;
  const message = `mock ${opts.name}: injected failure (HTTP ${status})`;
  if (status === 429) return sendError(res, 429, message, 'rate_limit_error', 'rate_limit_exceeded', { 'retry-after': '1' });
  if (status >= 500) return sendError(res, status, message, 'server_error', 'mock_failure');
  sendError(res, status, message, 'invalid_request_error', 'mock_failure');
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null, headers: OutgoingHttpHeaders = {}): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: OutgoingHttpHeaders = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Status and headers, then silence until the client (or close()) gives up. */
function flushHeadersOnly(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  res.writeHead(200, headers);
  res.flushHeaders();
}

/** Cuts the connection mid-body, after what was already written has reached the kernel. */
function breakConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  // http corks the socket until the next tick, so a destroy right now would drop the last chunks.
  setImmediate(() => {
    if (socket.writableLength > 0) socket.once('drain', () => socket.destroy());
    else socket.destroy();
  });
}

function modelEntry(id: string) {
  return { id, object: 'model', created: 0, owned_by: 'llm-route-mock' };
}
