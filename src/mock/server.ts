import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { decodeSegment } from '../util/decode-segment.js';
import { anthropicApi } from './anthropic.js';
import { ollamaApi } from './ollama.js';
import { openaiApi } from './openai.js';
import type { MockOptions } from './options.js';
import { createRandom, forkRandom, type Random } from './random.js';
import { completionWords, type Endpoint, type Facts, type Frames, type MockApi, type MockWire } from './wire.js';

/**
 * The fault-injecting upstream behind `llm-route mock`, in the API --protocol names (openai.ts,
 * ollama.ts, anthropic.ts write its bytes). Per answer, in order: fail (--fail-status), stall
 * (headers, then silence), TTFT delay, then content chunks paced by --tokens-per-s, some
 * malformed, the socket broken (--die-rate, --die-after). The same flags act on every API.
 */
export interface MockServer {
  /** The base URL of a provider of the protocol's type: http://127.0.0.1:PORT/v1 for openai, no /v1 for ollama and anthropic. */
  url: string;
  port: number;
  /** Stops every timer, destroys every socket and stops listening. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const JSON_HEADERS = { 'content-type': 'application/json' };
const APIS = { openai: openaiApi, ollama: ollamaApi, anthropic: anthropicApi };

export async function startMock(opts: MockOptions): Promise<MockServer> {
  const dice = createRandom(opts.seed);
  const api: MockApi = APIS[opts.protocol](opts.name, completionWords(opts.name, opts.tokens));
  const prefixes = Object.keys(api.endpoints).filter((path) => path.endsWith('/'));
  const chunkGapMs = opts.tokensPerS > 0 ? 1000 / opts.tokensPerS : 0;
  const clocks = new Set<RequestClock>();
  let sequence = 0;

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const prefix = path in api.endpoints ? undefined : prefixes.find((p) => path.startsWith(p) && path.length > p.length);
    const endpoint: Endpoint | undefined = api.endpoints[prefix ?? path];
    if (!endpoint) return sendError(res, api.error, 404, `no route for ${req.method} ${path}`, 'not_found');
    if (req.method !== endpoint.method) return sendError(res, api.error, 405, `${req.method} not allowed here: use ${endpoint.method}`);
    const rest = prefix ? decodeSegment(path.slice(prefix.length)) : '';
    if ('wire' in endpoint) {
      return readJson(req, res, endpoint.wire.error, (body) => {
        const fact = endpoint.before?.(body);
        return fact ? sendFacts(res, fact) : answer(endpoint.wire, body, res);
      });
    }
    if (req.method === 'GET') return sendFacts(res, endpoint.facts(undefined, rest));
    readJson(req, res, api.error, (body) => sendFacts(res, endpoint.facts(body, rest)));
  });

  function answer(wire: MockWire, body: unknown, res: ServerResponse): void {
    const startedAt = performance.now();
    const request = wire.read(body, opts.name);
    if (typeof request === 'string') return sendError(res, wire.error, 400, request);
    const rng = forkRandom(dice);
    if (opts.failRate > 0 && rng() < opts.failRate) return sendFailure(res, wire, opts);
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
    const frames = wire.frames({ sequence: ++sequence, request, tokens: opts.tokens, startedAt });

    if (!request.stream) {
      if (stall) return flushHeadersOnly(res, JSON_HEADERS);
      clock.after(ttftMs + Math.max(0, opts.tokens - 1) * chunkGapMs, () => {
        const whole = frames.whole();
        const breaks = dieAt <= opts.tokens;
        res.writeHead(200, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(whole) });
        if (!breaks) return void res.end(whole);
        res.write(whole.slice(0, Math.floor(whole.length / 2)));
        breakConnection(res);
      });
      return;
    }

    if (stall) return flushHeadersOnly(res, wire.streamHeaders);
    res.writeHead(200, wire.streamHeaders);
    if (frames.open) res.write(frames.open);
    else res.flushHeaders();
    clock.after(ttftMs, () => streamContent(res, clock, rng, frames, dieAt));
  }

  function streamContent(res: ServerResponse, clock: RequestClock, rng: Random, frames: Frames, dieAt: number): void {
    const startedAt = performance.now();
    let sent = 0;
    const step = (): void => {
      if (res.destroyed) return;
      while (sent < opts.tokens && sent !== dieAt) {
        const malformed = opts.malformedRate > 0 && rng() < opts.malformedRate;
        const flushed = res.write(malformed ? frames.malformed() : frames.content(sent));
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
      else res.end(frames.end());
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

  return { url: `http://${host}:${port}${api.basePath}`, port, close };
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

function readJson(req: IncomingMessage, res: ServerResponse, error: MockWire['error'], onBody: (body: unknown) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return sendError(res, error, 413, `request body over ${MAX_BODY_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      return sendError(res, error, 400, `invalid JSON body: ${(err as Error).message}`, 'invalid_json');
    }
    onBody(body);
  });
}

function sendFailure(res: ServerResponse, wire: MockWire, opts: MockOptions): void {
  const status = opts.failStatus;
  const message = `mock ${opts.name}: injected failure (HTTP ${status})`;
  if (status === 429) return sendError(res, wire.error, 429, message, 'rate_limit_exceeded', { 'retry-after': '1' });
  sendError(res, wire.error, status, message, 'mock_failure');
}

function sendError(
  res: ServerResponse,
  error: MockWire['error'],
  status: number,
  message: string,
  code: string | null = null,
  headers: OutgoingHttpHeaders = {},
): void {
  const body = error(status, message, code);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function sendFacts(res: ServerResponse, { status, json }: Facts): void {
  const body = JSON.stringify(json);
  res.writeHead(status, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) });
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
