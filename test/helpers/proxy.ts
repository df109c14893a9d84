import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { loadConfigText } from '../../src/config/load.js';
import { ProxyServer } from '../../src/server/server.js';
import type { Clock } from '../../src/util/clock.js';
import type { UsageLogOptions } from '../../src/usage/usage-log.js';

export interface TierSpec {
  name: string;
  /** Base URL of the upstream (a FakeUpstream's url, or a dead port). */
  url: string;
  model?: string;
  api_key?: string;
  weight?: number;
  timeouts?: Record<string, number>;
  retry?: Record<string, number>;
  circuit?: Record<string, number>;
  rollback?: Record<string, number>;
  /** The provider's `health:` block. */
  health?: Record<string, unknown>;
  /** The provider's type (default openai) and any other provider keys (passthrough, ollama, …). */
  type?: 'openai' | 'anthropic' | 'ollama' | 'gemini';
  provider?: Record<string, unknown>;
  /** Other tier keys (max_tokens, ollama, …). */
  extra?: Record<string, unknown>;
  price?: Record<string, number>;
}

export interface ConfigSpec {
  tiers: TierSpec[];
  route?: string;
  aliases?: string[];
  deadline_ms?: number;
  routeTimeouts?: Record<string, number>;
  /** Other route keys (on_break, resume, …). */
  routeKeys?: Record<string, unknown>;
  server?: Record<string, unknown>;
  /** More top-level keys (usage, budgets). */
  top?: Record<string, unknown>;
}

/**
 * One tier of a test tier file: its provider (named p_<tier>) goes into `providers`, the
 * tier entry is returned. Only the keys a test sets are written.
 */
export function tierEntry(t: TierSpec, providers: Record<string, unknown>): Record<string, unknown> {
  providers[`p_${t.name}`] = {
    type: t.type ?? 'openai',
    base_url: t.url,
    ...(t.api_key ? { api_key: t.api_key } : {}),
    ...(t.health ? { health: t.health } : {}),
    ...t.provider,
  };
  const { url: _url, api_key: _key, health: _health, model, type: _type, provider: _provider, extra, ...rest } = t;
  return { ...rest, ...extra, provider: `p_${t.name}`, model: model ?? `${t.name}-model` };
}

/** A tier file with one provider per tier, as YAML text. */
export function configYaml(spec: ConfigSpec): string {
  const providers: Record<string, unknown> = {};
  const tiers = spec.tiers.map((t) => tierEntry(t, providers));
  const route: Record<string, unknown> = { tiers };
  if (spec.aliases) route.aliases = spec.aliases;
  if (spec.deadline_ms !== undefined) route.deadline_ms = spec.deadline_ms;
  if (spec.routeTimeouts) route.timeouts = spec.routeTimeouts;
  Object.assign(route, spec.routeKeys);
  return stringify({ version: 1, server: { port: 0, ...spec.server }, providers, routes: { [spec.route ?? 'chat']: route }, ...spec.top });
}

export interface RunningProxy {
  server: ProxyServer;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** http://127.0.0.1:PORT/v1, for the OpenAI SDK. */
  baseURL: string;
  /** Parsed JSON-lines request log. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startProxy(
  specOrYaml: ConfigSpec | string,
  opts: {
    env?: Record<string, string>;
    random?: () => number;
    clock?: Clock;
    usage?: UsageLogOptions;
    /** The OTEL_* variables the server reads (none by default: the machine's own never reach a test's server). */
    traceEnv?: Record<string, string>;
  } = {},
): Promise<RunningProxy> {
  const yaml = typeof specOrYaml === 'string' ? specOrYaml : configYaml(specOrYaml);
  const config = loadConfigText(yaml, '/test/llm-route.yaml', opts.env ?? {});
  const logs: Array<Record<string, unknown>> = [];
  const log = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const server = new ProxyServer({ config, port: 0, log, random: opts.random, clock: opts.clock, usage: opts.usage, env: opts.traceEnv ?? {} });
  const { url } = await server.listen();
  return { server, origin: url, baseURL: `${url}/v1`, logs, close: () => server.close(500) };
}

/** POSTs a chat request with raw fetch. */
export function chat(
  proxy: RunningProxy,
  body: Record<string, unknown>,
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${proxy.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], model: 'chat', ...body }),
    signal: init.signal,
  });
}

/** The data payloads of an SSE body, in order. */
export function sseData(text: string): string[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((e) => e.trim() !== '')
    .map((e) =>
      e
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n'),
    );
}

/** The concatenated delta.content of an SSE body. */
export function sseText(text: string): string {
  let out = '';
  for (const data of sseData(text)) {
    if (data === '[DONE]') continue;
    try {
      const parsed = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
      for (const c of parsed.choices ?? []) out += c.delta?.content ?? '';
    } catch {
      // not JSON: ignored here
    }
  }
  return out;
}

/** Every data payload, JSON-parsed when it is JSON ("[DONE]" stays a string). */
export function sseEvents(text: string): unknown[] {
  return sseData(text).map((d) => {
    try {
      return JSON.parse(d) as unknown;
    } catch {
      return d;
    }
  });
}

type ChunkLike = { error?: { code?: string }; choices?: Array<{ delta?: { role?: string } }>; usage?: unknown };

export function errorEvents(text: string): Array<{ error: { code?: string; message?: string } }> {
  return sseEvents(text).filter((e): e is { error: { code?: string } } => typeof e === 'object' && e !== null && 'error' in e);
}

export function roleChunks(text: string): number {
  return sseEvents(text).filter((e) => ((e as ChunkLike)?.choices ?? []).some((c) => c.delta?.role !== undefined)).length;
}

export function usageOnlyChunks(text: string): unknown[] {
  return sseEvents(text).filter((e) => {
    const c = e as ChunkLike;
    return typeof c === 'object' && c !== null && Array.isArray(c.choices) && c.choices.length === 0 && c.usage !== undefined;
  });
}

/** A base URL nothing listens on (connection refused). */
export const DEAD_URL = 'http://127.0.0.1:1/v1';
