import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { notRunningText, type SessionAnswer, statuslineText } from './statusline-text.js';

// `llm-route statusline` runs on every update of Claude Code's status line, so it must start
// in a few milliseconds beyond Node's own start: bin/llm-route.js runs it without the CLI
// bundle (commander, the proxy) and this module imports nothing heavy. node:http is required
// rather than imported: an import builds its ESM facade, which runs every lazy getter.
const http = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export interface StatuslineOptions {
  /** The llm-route to ask (`exec` writes its private proxy's here). */
  url?: string;
  /** The tier file whose server address to ask, when no URL is given. */
  config?: string;
  color?: boolean;
}

/** Claude Code's status line input is a few KB; anything much larger is not it. */
const MAX_INPUT_BYTES = 1024 * 1024;
/** Claude Code closes stdin at once; a terminal or a stuck pipe must not hold the line. */
const INPUT_WAIT_MS = 500;
/** The server answers from memory (its usage query is cached): a slow answer means a stuck server. */
const ANSWER_WAIT_MS = 1_000;
const DEFAULT_URL = 'http://127.0.0.1:4141';

/**
 * Reads Claude Code's status-line JSON on stdin (its `session_id`), asks the running llm-route
 * for that session's summary (`GET /admin/sessions/<id>`) and prints one line. Always exits 0:
 * a failing status line command blanks Claude Code's line, and no server is no error here.
 */
export async function runStatusline(opts: StatuslineOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const color = opts.color !== false && env.NO_COLOR === undefined;
  const session = sessionId(await readInput());
  const base = opts.url ?? env.LLM_ROUTE_URL ?? (await tierFileAddress(opts.config, env)) ?? DEFAULT_URL;
  // exec sets LLM_ROUTE_TOKEN when LLM_ROUTE_API_KEY holds the client's own key (api_key: from_client).
  const token = env.LLM_ROUTE_ADMIN_TOKEN ?? env.LLM_ROUTE_TOKEN ?? env.LLM_ROUTE_API_KEY;
  const answer = await ask(base, session, token);
  process.stdout.write(
    `${typeof answer === 'string' ? notRunningText(color, answer === 'not running' ? undefined : answer) : statuslineText(answer, color)}\n`,
  );
  return 0;
}

/** The flags after `statusline`, for the light start-up path; null when they need the full CLI (help, a mistake). */
export function parseStatuslineArgs(args: string[]): StatuslineOptions | null {
  const opts: StatuslineOptions = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag === '--no-color') opts.color = false;
    else if (flag === '--url' || flag === '-c' || flag === '--config') {
      const value = inline ?? args[++i];
      if (value === undefined || value === '') return null;
      if (flag === '--url') opts.url = value;
      else opts.config = value;
    } else return null;
  }
  return opts;
}

async function readInput(): Promise<string> {
  if (isatty(0)) return '';
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      clearTimeout(timer);
      process.stdin.destroy(); // a pipe nobody closes must not hold the process
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(done, INPUT_WAIT_MS);
    process.stdin.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_INPUT_BYTES) chunks.push(chunk);
      else done();
    });
    process.stdin.once('end', done);
    process.stdin.once('error', done);
  });
}

/** Claude Code's `session_id`; '-' (a session nobody has: only today's cost) without one. */
function sessionId(input: string): string {
  try {
    const value = (JSON.parse(input) as { session_id?: unknown }).session_id;
    if (typeof value === 'string' && value !== '') return value;
  } catch {
    // not Claude Code's JSON (a run by hand): no session
  }
  return '-';
}

/** `server.host` / `server.port` of the tier file, when one is found; loaded only without a URL (exec gives one). */
async function tierFileAddress(config: string | undefined, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { resolveConfigPath } = await import('../config/config-path.js');
  let file: string;
  try {
    file = resolveConfigPath(config, env);
  } catch {
    return undefined;
  }
  try {
    const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    const server = (parse(readFileSync(file, 'utf8')) as { server?: { host?: unknown; port?: unknown } } | null)?.server;
    const host = typeof server?.host === 'string' ? connectHost(server.host) : '127.0.0.1';
    const port = typeof server?.port === 'number' ? server.port : 4141;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  } catch {
    return undefined;
  }
}

/** A wildcard listen address is reached on loopback. */
function connectHost(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
}

/** The session's summary, or a few words saying why there is none. */
function ask(base: string, session: string, token: string | undefined): Promise<SessionAnswer | string> {
  let url: URL;
  try {
    url = new URL(`/admin/sessions/${encodeURIComponent(session)}`, base);
  } catch {
    return Promise.resolve(`bad --url ${base}`);
  }
  return new Promise((resolve) => {
    // agent: false: one connection, closed after the answer (a pooled keep-alive socket would hold the process).
    const options = { headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: ANSWER_WAIT_MS, agent: false };
    const req = http.get(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return resolve(`no summary from ${url.host} (HTTP ${res.statusCode})`);
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as SessionAnswer);
        } catch {
          resolve(`no summary from ${url.host} (not JSON)`);
        }
      });
      res.on('error', () => resolve(`no summary from ${url.host}`));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve(`no answer from ${url.host} within ${ANSWER_WAIT_MS} ms`);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' ? 'not running' : `no answer from ${url.host} (${err.code ?? err.message})`);
    });
  });
}
