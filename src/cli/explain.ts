import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { findRoute, routeKind } from '../config/find-route.js';
import { loadTierFileOrReport } from './load-tier-file.js';
import type { Config, Route, Rule, Tier } from '../config/schema.js';
import { discoverTier } from '../fit/discover-tier.js';
import { explainPlan, type Explained } from '../fit/plan-explain.js';
import { recordDiscovered } from '../fit/tier-facts.js';
import { clientCodec, clientCodecs, embeddingsCodec } from '../protocols/registry.js';
import { takesClientCredentials } from '../config/all-tiers.js';
import { captureCredential } from '../protocols/core/credential.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { chooseRoute } from '../rules/choose-route.js';
import { excludedTiers, wantsLocalOnly } from '../rules/local-only.js';
import { detectProtocol } from '../savers/detect-protocol.js';
import { applyRouteSavers } from '../savers/route-savers.js';
import { isRecord } from '../util/is-record.js';
import { createStaleAwareAgent } from '../util/stale-socket-pool.js';

export interface ExplainOptions {
  config?: string;
  route?: string;
  json?: boolean;
  protocol?: string;
  /** `Name: value` request headers the rules and local-only see, as a client would send them. */
  header?: string[];
}

const PROTOCOLS: readonly ClientProtocol[] = clientCodecs().map((codec) => codec.protocol);

/**
 * `llm-route explain FILE.json`: which tiers a request body would try and which it would skip,
 * and why, with the numbers; it runs discovery itself and sends no model request.
 * 0 when some tier would be tried, 1 when none would (a one-line summary says why), 2 on bad
 * input (the file, the tier file, the route, the protocol).
 */
export async function runExplain(file: string, opts: ExplainOptions): Promise<number> {
  const fail = (message: string): number => {
    process.stderr.write(`llm-route explain: ${message}\n`);
    return 2;
  };
  const config = loadTierFileOrReport(opts.config);
  if (!config) return 2;
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return fail(`cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  if (!isRecord(body)) return fail(`${file} is not a JSON object (a request body)`);
  if (opts.protocol !== undefined && !PROTOCOLS.includes(opts.protocol as ClientProtocol)) return fail(`--protocol must be one of ${PROTOCOLS.join(', ')}`);
  const name = opts.route ?? (typeof body.model === 'string' ? body.model : undefined);
  if (name === undefined) return fail('the body names no model: say which route with --route');
  // A body for an embeddings route is read as an embeddings request: OpenAI's, or with --protocol ollama or gemini that API's.
  const embeds = routeKind(findRoute(config, name, 'embeddings') ?? { embedding: undefined }) === 'embeddings';
  // Else guessed from the body's shape, as `savers try` does; a body in no protocol's shape is judged as Chat Completions.
  const protocol = (opts.protocol as ClientProtocol | undefined) ?? (embeds ? PROTOCOLS[0] : (detectProtocol(body) ?? PROTOCOLS[0]));
  const headers = headerLines(opts.header ?? []);
  if (typeof headers === 'string') return fail(headers);
  const codec = (embeds ? embeddingsCodec(protocol, body, name) : undefined) ?? clientCodec(protocol);
  // The route as the body's model, and as a path would name it (Gemini's API names the model in the path).
  const target = { model: name, query: new URLSearchParams() };
  const asSent = codec.parse({ ...body, model: name }, headers, undefined, target);
  if (!asSent.ok) return fail(`not a valid ${protocol} request: ${asSent.message}`);
  const chosen = await routeFor(config, opts.route, asSent.request, headers, Buffer.byteLength(JSON.stringify(body)));
  if (!chosen) return fail(`unknown route "${name}" (known: ${[...config.routes.keys()].join(', ')})`);
  const { route, rule, notLocal } = chosen;
  const saved = route.savers.length > 0 ? (await applyRouteSavers(route, protocol, { ...body, model: name })).body : { ...body, model: name };
  // The client's own credential, as serve takes it: a from_client tier is skipped without one (pass it with --header).
  const credential = takesClientCredentials(config) ? captureCredential(headers, codec.credential, config.server.auth_token) : undefined;
  const parsed = codec.parse(saved, headers, credential, target);
  if (!parsed.ok) return fail(`not a valid ${protocol} request: ${parsed.message}`);

  const agent = createStaleAwareAgent();
  const unreachable = new Set<Tier>();
  try {
    // A tier local-only excludes is not contacted at all, not even for discovery.
    await Promise.all(
      route.tiers
        .filter((tier) => !notLocal.has(tier))
        .map(async (tier) => {
          const found = await discoverTier(tier, { timeoutMs: tier.provider.health.timeout_ms, dispatcher: agent });
          recordDiscovered(tier, found.facts);
          if (found.unreachable) unreachable.add(tier);
        }),
    );
  } finally {
    await agent.destroy().catch(() => undefined);
  }
  const plan = { ...(await explainPlan(route, codec, parsed.request, unreachable, notLocal)), ...(config.rules?.length ? { rule: rule?.label ?? null } : {}) };
  process.stdout.write(opts.json ? `${JSON.stringify(plan, null, 2)}\n` : planText(plan));
  if (plan.tiers.some((tier) => tier.decision === 'try')) return 0;
  // Nothing would be sent: say so in one line (on stderr with --json, whose stdout is the document).
  (opts.json ? process.stderr : process.stdout).write(`${noTierSummary(plan)}\n`);
  return 1;
}

/** The line that ends a plan in which every tier is skipped. */
function noTierSummary(plan: Explained): string {
  const why = plan.tiers.map((tier) => `${tier.tier}: ${tier.reason}`).join(', ');
  return `no tier would be tried (${why}): serve would answer this request with an error`;
}

/**
 * The route as the proxy would choose it (rules, then the model name), or the one --route
 * names; a local-only route's or request's tiers off the local network are shown excluded.
 */
async function routeFor(
  config: Config,
  named: string | undefined,
  request: ClientRequest,
  headers: IncomingHttpHeaders,
  bytes: number,
): Promise<{ route: Route; rule: Rule | null; notLocal: Set<Tier> } | undefined> {
  const chosen = named === undefined ? await chooseRoute(config, request, headers, bytes) : undefined;
  const route = chosen ? (chosen.unfiltered ?? chosen.route) : named === undefined ? undefined : findRoute(config, named);
  if (!route) return undefined;
  return { route, rule: chosen?.rule ?? null, notLocal: new Set(wantsLocalOnly(route, headers) ? excludedTiers(route) : []) };
}

/** `--header "Name: value"` lines as Node's incoming headers (names lower-cased); a message for a line without a colon. */
function headerLines(lines: string[]): IncomingHttpHeaders | string {
  const headers: IncomingHttpHeaders = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return `--header expects "Name: value", got ${JSON.stringify(line)}`;
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function planText(plan: Explained): string {
  const lines = [`route "${plan.route}" (${plan.protocol}): ${plan.prompt_tokens} prompt tokens`];
  if (plan.rule !== undefined) lines.push(plan.rule === null ? '  no rule matched: the model name chose the route' : `  rule ${plan.rule} chose the route`);
  for (const tier of plan.tiers) {
    const window = tier.context === null ? 'window unknown' : `window ${tier.context}`;
    lines.push(`  ${tier.decision === 'try' ? 'try ' : 'skip'}  ${tier.tier}  (${window}, needs ${tier.need})${tier.message ? `: ${tier.message}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}
