import { createRandom } from '../../src/mock/random.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { stringify } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { ProxyServer } from '../../src/server/server.js';
import type { Clock } from '../../src/util/clock.js';
import { completion, healthyStream, type Script } from './fake-upstream.js';
import { type RunningProxy, type TierSpec, tierEntry } from './proxy.js';

/**
 * Shared pieces for the control-plane suites (health, weights, admin API, reload, rollback):
 * a tier-file builder that knows the control-plane keys, a proxy started from a real temp
 * file (for reload and watch), admin API calls, and small request helpers.
 */

export type ControlTier = TierSpec;

export interface ControlSpec {
  tiers: ControlTier[];
  route?: string;
  /** More routes, by name. */
  routes?: Record<string, ControlTier[]>;
  server?: Record<string, unknown>;
}

/** A tier file with one provider per tier (named p_<tier>, shared by same-named tiers), as YAML text. */
export function controlYaml(spec: ControlSpec): string {
  const providers: Record<string, unknown> = {};
  const tiersOf = (tiers: ControlTier[]) => tiers.map((t) => tierEntry(t, providers));
  const routes: Record<string, unknown> = { [spec.route ?? 'chat']: { tiers: tiersOf(spec.tiers) } };
  for (const [name, tiers] of Object.entries(spec.routes ?? {})) routes[name] = { tiers: tiersOf(tiers) };
  return stringify({ version: 1, server: { port: 0, ...spec.server }, providers, routes });
}

export interface FileProxy extends RunningProxy {
  /** The tier file on disk. */
  file: string;
  /** Replaces the tier file's content. */
  write(text: string): void;
}

/** A proxy started from a real tier file in a temp folder (removed on close). */
export async function startFileProxy(
  yamlText: string,
  opts: { watch?: boolean; activeChecks?: boolean; random?: () => number; clock?: Clock } = {},
): Promise<FileProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-control-'));
  const file = join(dir, 'llm-route.yaml');
  writeFileSync(file, yamlText);
  const config = loadConfig(file, {});
  const logs: Array<Record<string, unknown>> = [];
  const log = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const server = new ProxyServer({ config, port: 0, log, random: opts.random, watch: opts.watch, activeChecks: opts.activeChecks, clock: opts.clock });
  const { url } = await server.listen();
  return {
    server,
    origin: url,
    baseURL: `${url}/v1`,
    logs,
    file,
    write: (text) => writeFileSync(file, text),
    close: async () => {
      await server.close(500);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface AdminAnswer {
  status: number;
  headers: Headers;
  json: any;
}

/** One admin API call; `body` is JSON-encoded unless it is a string (sent as-is). */
export async function admin(
  proxy: { origin: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<AdminAnswer> {
  const res = await fetch(`${proxy.origin}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, json };
}

/** GET /admin/routes → the tiers of one route, by name. */
export async function adminTiers(proxy: { origin: string }, route = 'chat'): Promise<Record<string, Record<string, any>>> {
  const { status, json } = await admin(proxy, 'GET', '/admin/routes');
  if (status !== 200) throw new Error(`GET /admin/routes answered ${status}: ${JSON.stringify(json)}`);
  const tiers = json.routes[route].tiers as Array<Record<string, any>>;
  return Object.fromEntries(tiers.map((t) => [t.name as string, t]));
}

/** GET /healthz → the tiers of one route, by name. */
export async function healthzTiers(proxy: { origin: string }, route = 'chat'): Promise<Record<string, Record<string, any>>> {
  const res = await fetch(`${proxy.origin}/healthz`);
  const json = (await res.json()) as any;
  return Object.fromEntries((json.routes[route].tiers as Array<Record<string, any>>).map((t) => [t.name as string, t]));
}

/** A chat request read to the end: which tier answered, the status, the body text. */
export async function ask(
  proxy: { origin: string },
  body: Record<string, unknown> = {},
): Promise<{ status: number; tier: string | null; attempts: number; text: string; headers: Headers }> {
  const res = await fetch(`${proxy.origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], stream: true, ...body }),
  });
  const text = await res.text();
  return {
    status: res.status,
    tier: res.headers.get('x-llm-route-tier'),
    attempts: Number(res.headers.get('x-llm-route-attempts')),
    text,
    headers: res.headers,
  };
}

/**
 * An upstream that answers its model list (GET …/models) with `models` and every chat
 * request with `chat`; the fake runs one script for every path, so it branches here.
 */
export function withModelList(models: string[], chat: Script): Script {
  return (ctx) => {
    if (ctx.req.method === 'GET') {
      if ((ctx.req.url ?? '').endsWith('/models')) return ctx.json(200, { object: 'list', data: models.map((id) => ({ id, object: 'model' })) });
      return ctx.error(404, 'not found');
    }
    return chat(ctx);
  };
}

/** Answers streams with a healthy stream and non-streaming requests with a whole completion of `text`. */
export function answer(text: string): Script {
  const stream = healthyStream([text]);
  return (ctx) => (ctx.body.stream === true ? stream(ctx) : ctx.json(200, completion(text)));
}

/** A seeded PRNG for repeatable weight draws: the mock's own dice. */
export const seeded = createRandom;
