import type { Config, Tier } from '../config/schema.js';
import { type TierKind as Kind, tierKind } from '../config/tier-kind.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { RequestFinished, TelemetryEvent } from '../telemetry/events.js';
import { priceBook, priceRequest } from '../usage/price-book.js';

/**
 * Sessions remembered at once. An agent session sends a request every few seconds at most; the
 * oldest-used session is forgotten first, so a long-lived server holds a bounded map whatever
 * its clients send (the ids come from them).
 */
const MAX_SESSIONS = 500;

interface TierTally {
  route: string;
  tier: string;
  requests: number;
  prompt: number;
  completion: number;
  cached: number;
}

interface LastRequest {
  at: number;
  route: string;
  tier: string | null;
  provider: string | null;
  model: string | null;
  status: number;
  outcome: string;
}

interface SessionTally {
  firstAt: number;
  requests: number;
  /** Requests no tier answered. */
  failed: number;
  /** Requests that tried more than one tier (the usage log's `failover`). */
  fallbacks: number;
  /** Failed attempts of those requests, by `tier\0outcome`. */
  reasons: Map<string, number>;
  /** Tool calls written as text that reached the client as tool calls. */
  toolCallsRecovered: number;
  tiers: Map<string, TierTally>;
  last: LastRequest;
}

/** Local or cloud (config/tier-kind.ts); null when the tier is no longer in the tier file. */
export type TierKind = Kind | null;

/** `GET /admin/sessions/<id>`: one agent session's requests as this server saw them (docs/agents.md). */
export interface SessionSummary {
  session: string;
  requests: number;
  first_at: string | null;
  last_at: string | null;
  last: { route: string; tier: string | null; kind: TierKind; provider: string | null; model: string | null; status: number; outcome: string } | null;
  local_requests: number;
  cloud_requests: number;
  failed_requests: number;
  fallbacks: number;
  fallback_reasons: Array<{ tier: string; outcome: string; count: number }>;
  tool_calls_recovered: number;
  tiers: Array<{ route: string; tier: string; kind: TierKind; requests: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }>;
  /** The upstreams' reported tokens at the tier file's prices (requests whose tokens the usage log counts itself are not in it). */
  cost_usd: number;
}

/**
 * A bounded, in-memory summary of each agent session's requests (Claude Code names its session
 * in a header): which tier answered the last one, how they split between tiers, fallbacks,
 * recovered tool calls, cost. Fed by `request_end`; read by the admin API for `llm-route
 * statusline`. Session ids never become metric labels or usage columns.
 */
export class SessionBoard {
  private readonly sessions = new Map<string, SessionTally>();
  private readonly unsubscribe: () => void;

  constructor(
    bus: TelemetryBus,
    private readonly max = MAX_SESSIONS,
  ) {
    this.unsubscribe = bus.subscribe(this.onEvent);
  }

  close(): void {
    this.unsubscribe();
  }

  get size(): number {
    return this.sessions.size;
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    if (event.type === 'request_end' && event.session !== undefined) this.add(event.session, event);
  };

  private add(id: string, event: RequestFinished): void {
    let tally = this.sessions.get(id);
    // Re-inserted on every use: a Map iterates in insertion order, so its first key is the least recently used.
    if (tally) this.sessions.delete(id);
    else tally = newTally(event.startedAt);
    this.sessions.set(id, tally);
    if (this.sessions.size > this.max) this.sessions.delete(this.sessions.keys().next().value as string);

    tally.requests++;
    const { route, tier, provider, model, status, outcome } = event;
    tally.last = { at: event.startedAt + event.durationMs, route, tier, provider, model, status, outcome };
    if (tier === null) tally.failed++;
    else {
      const key = `${route}\0${tier}`;
      let sums = tally.tiers.get(key);
      if (!sums) tally.tiers.set(key, (sums = { route, tier, requests: 0, prompt: 0, completion: 0, cached: 0 }));
      sums.requests++;
      if (event.usage) {
        sums.prompt += event.usage.prompt_tokens;
        sums.completion += event.usage.completion_tokens;
        sums.cached += event.usage.cached_tokens ?? 0;
      }
    }
    const attempts = event.attempts;
    if (attempts.some((a) => a.tier !== attempts[0].tier)) {
      tally.fallbacks++;
      for (const a of attempts) {
        if (a.outcome === 'ok') continue;
        const key = `${a.tier}\0${a.outcome}`;
        tally.reasons.set(key, (tally.reasons.get(key) ?? 0) + 1);
      }
    }
    const toolText = event.toolText?.at(-1);
    if (toolText && (toolText.result === 'recovered' || toolText.result === 'repaired')) tally.toolCallsRecovered += toolText.calls;
  }

  /** The session's summary under `config` (its tiers' kinds and prices); an unknown session has no requests. */
  summary(id: string, config: Config): SessionSummary {
    const tally = this.sessions.get(id);
    const summary: SessionSummary = {
      session: id,
      requests: tally?.requests ?? 0,
      first_at: tally ? new Date(tally.firstAt).toISOString() : null,
      last_at: tally ? new Date(tally.last.at).toISOString() : null,
      last: null,
      local_requests: 0,
      cloud_requests: 0,
      failed_requests: tally?.failed ?? 0,
      fallbacks: tally?.fallbacks ?? 0,
      fallback_reasons: [],
      tool_calls_recovered: tally?.toolCallsRecovered ?? 0,
      tiers: [],
      cost_usd: 0,
    };
    if (!tally) return summary;
    const { route, tier, provider, model, status, outcome } = tally.last;
    summary.last = { route, tier, kind: kindOf(tierOf(config, route, tier)), provider, model, status, outcome };
    // Priced as the usage log prices its rows.
    const book = priceBook(config);
    for (const sums of tally.tiers.values()) {
      const kind = kindOf(tierOf(config, sums.route, sums.tier));
      const cost = priceRequest(book, sums.route, sums.tier, sums).cost;
      if (kind === 'local') summary.local_requests += sums.requests;
      else if (kind === 'cloud') summary.cloud_requests += sums.requests;
      summary.cost_usd += cost;
      summary.tiers.push({
        route: sums.route,
        tier: sums.tier,
        kind,
        requests: sums.requests,
        prompt_tokens: sums.prompt,
        completion_tokens: sums.completion,
        cost_usd: cost,
      });
    }
    for (const [key, count] of tally.reasons) {
      const [tier, outcome] = key.split('\0');
      summary.fallback_reasons.push({ tier, outcome, count });
    }
    summary.fallback_reasons.sort((a, b) => b.count - a.count);
    return summary;
  }
}

function newTally(at: number): SessionTally {
  return {
    firstAt: at,
    requests: 0,
    failed: 0,
    fallbacks: 0,
    reasons: new Map(),
    toolCallsRecovered: 0,
    tiers: new Map(),
    last: { at, route: '', tier: null, provider: null, model: null, status: 0, outcome: '' },
  };
}

function tierOf(config: Config, route: string, tier: string | null): Tier | undefined {
  return tier === null ? undefined : config.routes.get(route)?.tiers.find((t) => t.name === tier);
}

function kindOf(tier: Tier | undefined): TierKind {
  return tier === undefined ? null : tierKind(tier);
}
