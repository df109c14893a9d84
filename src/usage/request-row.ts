import { toolTextSummary } from '../protocols/tool-text/scope.js';
import type { RequestFinished } from '../telemetry/events.js';
import type { TokenCounter } from '../tokens/count.js';
import { priceRequest, type PriceBook } from './price-book.js';

/** The fields of a finished request the usage log keeps (the rest of the event is not needed). */
export type LoggedRequest = Pick<
  RequestFinished,
  | 'id'
  | 'startedAt'
  | 'protocol'
  | 'route'
  | 'tier'
  | 'provider'
  | 'model'
  | 'status'
  | 'outcome'
  | 'stream'
  | 'ttftMs'
  | 'durationMs'
  | 'usage'
  | 'chunkErrors'
  | 'attempts'
  | 'savers'
  | 'estimate'
  | 'resumed'
  | 'promptTruncated'
  | 'toolText'
  | 'loserUsage'
  | 'credential'
  | 'embeddings'
>;

export type TokenSource = 'upstream' | `estimated:${string}`;

/** One attempt as stored: which tier, how it ended, its own time (for an ok stream: its TTFT). */
export interface AttemptRow {
  tier: string;
  attempt: number;
  outcome: string;
  status: number | null;
  ms: number;
}

/** One request as stored in the usage log. Tokens are 0 and token_source null when no tier answered. */
export interface RequestRow {
  id: string;
  startedAt: number;
  protocol: string;
  route: string;
  tier: string | null;
  provider: string | null;
  model: string | null;
  status: number;
  outcome: string;
  stream: boolean;
  ttftMs: number | null;
  durationMs: number;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** The tier's server reported how many prompt tokens it read from its cache (cachedTokens may be 0 then). */
  cacheReported: boolean;
  tokenSource: TokenSource | null;
  costUsd: number;
  savedUsd: number;
  chunkErrors: number;
  /** More than one tier was tried. */
  failover: boolean;
  /** Totals over the savers that ran: tokens before the first and after the last, and how many failed. */
  saverTokensBefore: number | null;
  saverTokensAfter: number | null;
  saverFailures: number;
  /** A stream that broke on a resume route: `how:result` ("continue:ok"); null otherwise. */
  resumed: string | null;
  /** `{"sent":N,"read":M}` when the tier cut the prompt silently, else null. */
  promptTruncated: string | null;
  /** The request's tool call written as text, `{"format","calls","repaired","result"}` (its last attempt's), else null. */
  toolText: string | null;
  /** 'client': the answering tier was sent the client's own credential (api_key: from_client); null otherwise. */
  credential: 'client' | null;
  /** The llm-route process that served it (UsageLog.run). */
  run: string | null;
  /** What it asked for: chat (and generation), or embeddings (docs/embeddings.md). */
  kind: 'chat' | 'embeddings';
  attempts: AttemptRow[];
}

/**
 * A finished request as a usage row: tokens from the upstream's usage, else counted from the
 * estimate texts with `counter` (marked estimated); cost and savings priced now, so reading the
 * log needs no prices.
 */
export function requestRow(e: LoggedRequest, book: PriceBook, counter: TokenCounter | undefined, run: string | null = null): RequestRow {
  let prompt = 0;
  let completion = 0;
  let cached = 0;
  let tokenSource: TokenSource | null = null;
  if (e.usage) {
    prompt = e.usage.prompt_tokens;
    completion = e.usage.completion_tokens;
    cached = e.usage.cached_tokens ?? 0;
    tokenSource = 'upstream';
  } else if (e.estimate && e.tier !== null && counter) {
    const upstreamPrompt = e.estimate.prompt;
    prompt = upstreamPrompt ? upstreamPrompt.tokens : counter.count(e.estimate.promptText);
    cached = upstreamPrompt?.cached ?? 0;
    completion = counter.count(e.estimate.completionText);
    tokenSource = `estimated:${counter.encoding}`;
  }
  let { cost, saved } = priceRequest(book, e.route, e.tier, { prompt, completion, cached });
  if (e.loserUsage) {
    // A hedge's loser reported tokens before it was stopped: a paid tier may bill them, so they count, at its own price.
    const lost = e.loserUsage.usage;
    const priced = priceRequest(book, e.route, e.loserUsage.tier, {
      prompt: lost.prompt_tokens,
      completion: lost.completion_tokens,
      cached: lost.cached_tokens ?? 0,
    });
    [prompt, completion, cached] = [prompt + lost.prompt_tokens, completion + lost.completion_tokens, cached + (lost.cached_tokens ?? 0)];
    [cost, saved] = [cost + priced.cost, saved + priced.saved];
  }
  const savers = e.savers ?? [];
  return {
    id: e.id,
    startedAt: Math.round(e.startedAt),
    protocol: e.protocol,
    route: e.route,
    tier: e.tier,
    provider: e.provider,
    model: e.model,
    status: e.status,
    outcome: e.outcome,
    stream: e.stream,
    ttftMs: e.ttftMs ?? null,
    durationMs: e.durationMs,
    promptTokens: prompt,
    completionTokens: completion,
    cachedTokens: cached,
    cacheReported: e.usage ? e.usage.cached_tokens !== undefined : cached > 0,
    tokenSource,
    costUsd: cost,
    savedUsd: saved,
    chunkErrors: e.chunkErrors,
    failover: triedSeveralTiers(e.attempts),
    saverTokensBefore: savers.length > 0 ? savers[0].before : null,
    saverTokensAfter: savers.length > 0 ? savers[savers.length - 1].after : null,
    saverFailures: savers.filter((s) => s.failed).length,
    resumed: e.resumed ? `${e.resumed.how}:${e.resumed.result}` : null,
    promptTruncated: e.promptTruncated ? JSON.stringify(e.promptTruncated) : null,
    toolText: e.toolText?.length ? JSON.stringify(toolTextSummary(e.toolText)) : null,
    credential: e.credential ?? null,
    run,
    kind: e.embeddings ? 'embeddings' : 'chat',
    attempts: e.attempts.map((a) => ({ tier: a.tier, attempt: a.attempt, outcome: a.outcome, status: a.status ?? null, ms: a.ms })),
  };
}

function triedSeveralTiers(attempts: LoggedRequest['attempts']): boolean {
  for (let i = 1; i < attempts.length; i++) if (attempts[i].tier !== attempts[0].tier) return true;
  return false;
}

/** One request's estimated tokens (prompt, completion, cached) and their cost, for the metrics. */
export interface EstimatedItem {
  route: string;
  tier: string;
  costUsd: number;
  prompt: number;
  completion: number;
  cached: number;
}

/** The rows whose tokens were counted here, not reported by the upstream: only the usage engine knows them. */
export function estimatedItems(rows: readonly RequestRow[]): EstimatedItem[] {
  const items: EstimatedItem[] = [];
  for (const row of rows) {
    if (row.tier === null || row.tokenSource === 'upstream' || row.tokenSource === null) continue;
    items.push({
      route: row.route,
      tier: row.tier,
      costUsd: row.costUsd,
      prompt: row.promptTokens,
      completion: row.completionTokens,
      cached: row.cachedTokens,
    });
  }
  return items;
}
