import { loadTierFileOrReport } from './load-tier-file.js';
import type { Config, Route, Tier } from '../config/schema.js';
import { checkTier, type TierCheck } from '../health/check-tier.js';
import { createStaleAwareAgent } from '../util/stale-socket-pool.js';
import type { Dispatcher } from 'undici';
import { Deadline } from '../health/deadline.js';
import { readLoaded } from '../health/loaded-models.js';
import { discoverTier } from '../fit/discover-tier.js';
import { recordDiscovered, type TierFit, tierFit } from '../fit/tier-facts.js';

export interface ProbeOptions {
  config?: string;
  route?: string;
  json?: boolean;
  /** Per-probe bound in ms, as typed on the command line. */
  timeout?: string;
}

interface Probed {
  tier: Tier;
  check: TierCheck;
  /** The tier's limits: its tier file's, else what discovery read from its server (src/fit/). */
  fit: TierFit;
}

/**
 * `llm-route probe`: checks every tier at once (reachability, model presence, a 1-token
 * request's TTFT). 0 when all are healthy, 1 when any is not, 2 for a bad tier file or flag.
 */
export async function runProbe(opts: ProbeOptions): Promise<number> {
  const timeoutMs = opts.timeout === undefined ? undefined : parseTimeout(opts.timeout);
  if (timeoutMs === null) {
    process.stderr.write(`invalid --timeout "${opts.timeout}": expected a positive number of milliseconds\n`);
    return 2;
  }
  const config = loadTierFileOrReport(opts.config);
  if (!config) return 2;
  const routes = selectRoutes(config, opts.route);
  if (!routes) {
    process.stderr.write(`unknown route "${opts.route}": the tier file has ${[...config.routes.keys()].join(', ')}\n`);
    return 2;
  }

  // A private agent, destroyed at the end, so no keep-alive socket holds the process open;
  // stale-aware, so a socket the server closed after a stream is retried, not a failed check.
  const agent = createStaleAwareAgent();
  try {
    const probes = routes.flatMap((route) =>
      route.tiers.map(async (tier): Promise<Probed> => {
        // Asked before the 1-token request, which would load the model itself.
        const loaded = await loadedBefore(tier, timeoutMs ?? tier.provider.health.timeout_ms, agent);
        const [checked, discovery] = await Promise.all([
          checkTier(tier, { timeoutMs: timeoutMs ?? defaultTimeoutMs(tier), ttft: true, dispatcher: agent }),
          discoverTier(tier, { timeoutMs: timeoutMs ?? tier.provider.health.timeout_ms, dispatcher: agent }),
        ]);
        recordDiscovered(tier, discovery.facts);
        const check = loaded === undefined ? checked : { ...checked, loaded };
        return { tier, check, fit: tierFit(tier) };
      }),
    );
    const probed = await Promise.all(probes);
    process.stdout.write(opts.json ? `${JSON.stringify(probeReport(routes, probed), null, 2)}\n` : probeTable(probed));
    return probed.every(({ check }) => check.status === 'healthy') ? 0 : 1;
  } finally {
    await agent.destroy().catch(() => undefined);
  }
}

/** The server's word on whether the tier's model is loaded (Ollama, llama-swap, llama.cpp's router, LM Studio); undefined: it says nothing. */
async function loadedBefore(tier: Tier, timeoutMs: number, agent: Dispatcher): Promise<boolean | undefined> {
  const deadline = new Deadline(timeoutMs, undefined);
  try {
    return await readLoaded(tier, { signal: deadline.signal, dispatcher: agent });
  } catch {
    return undefined;
  } finally {
    deadline.dispose();
  }
}

function parseTimeout(text: string): number | null {
  const ms = Number(text);
  return /^\s*\d+\s*$/.test(text) && ms > 0 ? ms : null;
}

function selectRoutes(config: Config, name: string | undefined): Route[] | null {
  if (name === undefined) return [...config.routes.values()];
  const route = config.routes.get(name);
  return route ? [route] : null;
}

/**
 * The model list gets the provider's health timeout, the 1-token request the tier's cold TTFT
 * budget (a probe often is the first request to an idle local model, which must load first).
 */
function defaultTimeoutMs(tier: Tier): number {
  return tier.provider.health.timeout_ms + tier.timeouts.cold_ttft_ms;
}

// ─── output ─────────────────────────────────────────────────────────────────

interface TierReport {
  tier: string;
  provider: string;
  model: string;
  reachable: boolean;
  model_present: boolean | null;
  ttft_ms: number | null;
  state: TierCheck['status'];
  error?: string;
  /** Worth knowing though healthy (a server that serves any model name). */
  note?: string;
  /** The server's word: whether the model was in memory (false: the next request waits for a load); absent when it says nothing. */
  loaded?: boolean | null;
  /** The context window in tokens (null: unknown, no pre-check) and where it came from. */
  context: number | null;
  context_source: string | null;
  vision: boolean | null;
  tools: boolean | null;
}

/** The --json document: `{ ok, routes: { <route>: [ per tier, in order ] } }`. */
function probeReport(routes: Route[], probed: Probed[]): { ok: boolean; routes: Record<string, TierReport[]> } {
  const byRoute: Record<string, TierReport[]> = {};
  for (const route of routes) byRoute[route.name] = [];
  for (const { tier, check, fit } of probed) {
    const report: TierReport = {
      tier: tier.name,
      provider: tier.provider.name,
      model: tier.model,
      reachable: check.reachable,
      model_present: check.modelPresent,
      ttft_ms: check.ttftMs,
      state: check.status,
      context: fit.context ?? null,
      context_source: fit.contextSource ?? null,
      vision: fit.vision ?? null,
      tools: fit.tools ?? null,
    };
    if (check.error !== undefined) report.error = check.error;
    if (check.note !== undefined) report.note = check.note;
    if (check.loaded !== undefined) report.loaded = check.loaded;
    byRoute[tier.route].push(report);
  }
  return { ok: probed.every(({ check }) => check.status === 'healthy'), routes: byRoute };
}

/** What is worth knowing about a tier, failing or not: the server's own remark, and whether its server had the model loaded. */
function notes(check: TierCheck): string {
  const said: string[] = [];
  if (check.loaded === false) said.push('cold (not loaded): the next request loads it');
  if (check.loaded === true) said.push('loaded');
  if (check.note !== undefined) said.push(check.note);
  return said.join('; ');
}

// Errors and notes in columns of their own: a note ("loaded") is no error.
const HEADER = ['ROUTE', 'TIER', 'PROVIDER/MODEL', 'REACHABLE', 'MODEL', 'TTFT', 'CONTEXT', 'STATE', 'ERROR', 'NOTE'];

function probeTable(probed: Probed[]): string {
  const rows = probed.map(({ tier, check, fit }) => [
    tier.route,
    tier.name,
    `${tier.provider.name}/${tier.model}`,
    check.reachable ? '✓' : '✗',
    check.modelPresent === null ? '?' : check.modelPresent ? '✓' : '✗',
    check.ttftMs === null ? '-' : `${check.ttftMs} ms`,
    fit.context === undefined ? '?' : `${fit.context} (${fit.contextSource})`,
    check.status,
    check.error ?? '-',
    notes(check),
  ]);
  const widths = HEADER.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  const healthy = probed.filter(({ check }) => check.status === 'healthy').length;
  return [line(HEADER), ...rows.map(line), '', `${healthy} of ${probed.length} tiers healthy`, ''].join('\n');
}
