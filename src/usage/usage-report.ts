import type { Database } from 'better-sqlite3';
import { percentile } from '../util/percentile.js';

export const GROUP_BY = ['route', 'tier', 'model', 'provider', 'day', 'credential', 'protocol', 'kind'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** One group of `usage --json` (docs/usage.md): tier keys are `route/tier`; TTFT is null for a group with no streams. */
export interface UsageGroup {
  key: string;
  requests: number;
  failovers: number;
  errors: number;
  ttft_p50_ms: number | null;
  ttft_p95_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /**
   * Of the prompt tokens of requests whose tier's server reported its cache, the share it read
   * from the cache (0..1, four decimals); null when no server in the group reported one.
   */
  cache_hit_rate: number | null;
  estimated_requests: number;
  cost_usd: number;
  saved_usd: number;
}

export interface UsageReport {
  since: string;
  until: string;
  /** Only this llm-route process's requests (`usage --run`). */
  run?: string;
  by: GroupBy;
  groups: UsageGroup[];
  totals: Omit<UsageGroup, 'key'>;
}

// `(none)`: requests no route (or no tier, model, provider) was found for.
const KEY_SQL: Record<GroupBy, string> = {
  route: "CASE route WHEN '' THEN '(none)' ELSE route END",
  tier: "CASE route WHEN '' THEN '(none)' ELSE route END || '/' || coalesce(tier, 'none')",
  model: "coalesce(model, '(none)')",
  provider: "coalesce(provider, '(none)')",
  protocol: 'protocol',
  // chat or embeddings (docs/embeddings.md)
  kind: 'kind',
  day: "strftime('%Y-%m-%d', started_at / 1000, 'unixepoch')",
  // Whose account paid: `client` (its tier was sent the client's own key or login), `provider` (the provider's api_key, or none needed).
  credential: "CASE WHEN credential = 'client' THEN 'client' WHEN tier IS NULL THEN '(none)' ELSE 'provider' END",
};

/** Requests from `since` to `until` (epoch ms); with `run`, only the rows one llm-route process wrote (UsageLog.run). */
export interface UsageRange {
  since: number;
  until: number;
  run?: string;
}

/** The WHERE clause (on `requests`) and its parameters for a range. */
export function rangeWhere(range: UsageRange, table = ''): { sql: string; params: Array<string | number> } {
  const t = table ? `${table}.` : '';
  const sql = `${t}started_at >= ? AND ${t}started_at <= ?${range.run === undefined ? '' : ` AND ${t}run = ?`}`;
  return { sql, params: range.run === undefined ? [range.since, range.until] : [range.since, range.until, range.run] };
}

/** Requests that did not end well, client aborts aside (a replay ended as well as its original). */
export const ERROR_SQL = "outcome NOT IN ('ok', 'client_abort', 'replayed')";

interface Sums {
  key: string;
  requests: number;
  failovers: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** The prompt tokens of the requests whose server reported its cache (rows from before the column: those with cached tokens). */
  cache_prompt_tokens: number;
  estimated_requests: number;
  cost_usd: number;
  saved_usd: number;
}

/**
 * `llm-route usage`: requests in [since, until] grouped by route, tier, model, provider, client protocol or UTC
 * day. Sums in SQL; TTFT percentiles (nearest rank, the client-seen TTFT of streams) over the
 * stored values.
 */
export function usageReport(db: Database, range: UsageRange & { by: GroupBy }): UsageReport {
  const key = KEY_SQL[range.by];
  const { sql: where, params } = rangeWhere(range);
  const sums = db
    .prepare(
      `SELECT ${key} AS key, count(*) AS requests, total(failover) AS failovers, total(${ERROR_SQL}) AS errors,
       total(prompt_tokens) AS prompt_tokens, total(completion_tokens) AS completion_tokens, total(cached_tokens) AS cached_tokens,
       total(CASE WHEN cache_reported = 1 OR cached_tokens > 0 THEN prompt_tokens END) AS cache_prompt_tokens,
       total(token_source LIKE 'estimated:%') AS estimated_requests, total(cost_usd) AS cost_usd, total(saved_usd) AS saved_usd
     FROM requests WHERE ${where} GROUP BY 1`,
    )
    .all(...params) as Sums[];
  const ttfts = db.prepare(`SELECT ${key} AS key, ttft_ms FROM requests WHERE ${where} AND ttft_ms IS NOT NULL ORDER BY ttft_ms`).all(...params) as Array<{
    key: string;
    ttft_ms: number;
  }>;

  const byKey = new Map<string, number[]>();
  const all: number[] = [];
  for (const row of ttfts) {
    let list = byKey.get(row.key);
    if (!list) byKey.set(row.key, (list = []));
    list.push(row.ttft_ms);
    all.push(row.ttft_ms);
  }
  const groups = sums.map((s) => ({ ...withTtft(s, byKey.get(s.key) ?? []) }));
  groups.sort(range.by === 'day' ? (a, b) => a.key.localeCompare(b.key) : (a, b) => b.requests - a.requests || a.key.localeCompare(b.key));
  const { key: _key, ...totals } = withTtft(sumGroups(sums), all);
  const window = { since: new Date(range.since).toISOString(), until: new Date(range.until).toISOString() };
  return { ...window, ...(range.run === undefined ? {} : { run: range.run }), by: range.by, groups, totals };
}

function withTtft(sums: Sums, sortedTtfts: readonly number[]): UsageGroup {
  return {
    key: sums.key,
    requests: sums.requests,
    failovers: sums.failovers,
    errors: sums.errors,
    ttft_p50_ms: sortedTtfts.length === 0 ? null : round1(percentile(sortedTtfts, 50)),
    ttft_p95_ms: sortedTtfts.length === 0 ? null : round1(percentile(sortedTtfts, 95)),
    prompt_tokens: sums.prompt_tokens,
    completion_tokens: sums.completion_tokens,
    cached_tokens: sums.cached_tokens,
    cache_hit_rate: sums.cache_prompt_tokens > 0 ? Math.round((sums.cached_tokens / sums.cache_prompt_tokens) * 10_000) / 10_000 : null,
    estimated_requests: sums.estimated_requests,
    cost_usd: sums.cost_usd,
    saved_usd: sums.saved_usd,
  };
}

function sumGroups(groups: readonly Sums[]): Sums {
  const total: Sums = {
    key: '',
    requests: 0,
    failovers: 0,
    errors: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    cache_prompt_tokens: 0,
    estimated_requests: 0,
    cost_usd: 0,
    saved_usd: 0,
  };
  for (const g of groups) {
    total.requests += g.requests;
    total.failovers += g.failovers;
    total.errors += g.errors;
    total.prompt_tokens += g.prompt_tokens;
    total.completion_tokens += g.completion_tokens;
    total.cached_tokens += g.cached_tokens;
    total.cache_prompt_tokens += g.cache_prompt_tokens;
    total.estimated_requests += g.estimated_requests;
    total.cost_usd += g.cost_usd;
    total.saved_usd += g.saved_usd;
  }
  return total;
}

export function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
