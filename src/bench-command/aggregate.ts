import type { Failure, Sample, Success } from './measure.js';
import { histogram, mean, round, spread, type HistogramBucket, type Spread } from './stats.js';
import type { BenchTarget } from './targets.js';

export interface ErrorSample {
  reason: string;
  status: number | null;
  message: string;
  /** How many requests failed with this reason and message. */
  count: number;
}

/** One tier's (or, through a proxy, one route's) results: the `--json` shape. */
export interface TierResult {
  route: string;
  tier: string | null;
  provider: string | null;
  model: string;
  requests: number;
  errors: number;
  ttft_ms: Spread;
  total_ms: Spread;
  /** Mean over successful requests of output tokens ÷ total time; null when none succeeded. */
  tokens_per_s: number | null;
  /** Mean output tokens per successful request. */
  output_tokens: number | null;
  /** Where token counts came from: upstream usage, counted content events, or both. */
  token_source: 'usage' | 'counted' | 'mixed' | null;
  /** `unique`: a nonce first in every prompt (no prompt-cache hit); `same`: --same-prompt. */
  prompt: 'unique' | 'same';
  /** Mean prompt tokens per successful request, from usage; null when the upstream reports none. */
  prompt_tokens: number | null;
  /** Mean of those read from the server's prompt cache (usage.prompt_tokens_details.cached_tokens); null when not reported. */
  cached_tokens: number | null;
  /** Requests sent again on a new connection because a pooled keep-alive socket was stale; not errors. */
  stale_socket_retries: number;
  histogram: HistogramBucket[];
  error_samples: ErrorSample[];
  /** Through a proxy: how many requests each tier answered (x-llm-route-tier). */
  served_by?: Record<string, number>;
}

const MAX_ERROR_SAMPLES = 5;

export function aggregate(target: BenchTarget, samples: readonly Sample[], samePrompt = false): TierResult {
  const successes = samples.filter((sample): sample is Success => sample.ok);
  const failures = samples.filter((sample): sample is Failure => !sample.ok);
  const ttfts = successes.map((sample) => sample.ttftMs);
  const rate = mean(successes.map((sample) => sample.outputTokens / (sample.totalMs / 1000)));
  const tokens = mean(successes.map((sample) => sample.outputTokens));
  const promptTokens = mean(successes.flatMap((sample) => (sample.promptTokens === null ? [] : [sample.promptTokens])));
  const cachedTokens = mean(successes.flatMap((sample) => (sample.cachedTokens === null ? [] : [sample.cachedTokens])));
  const result: TierResult = {
    route: target.route,
    tier: target.tier,
    provider: target.provider,
    model: target.model,
    requests: samples.length,
    errors: failures.length,
    ttft_ms: spread(ttfts),
    total_ms: spread(successes.map((sample) => sample.totalMs)),
    tokens_per_s: rate === null ? null : round(rate),
    output_tokens: tokens === null ? null : round(tokens),
    token_source: tokenSource(successes),
    prompt: samePrompt ? 'same' : 'unique',
    prompt_tokens: promptTokens === null ? null : round(promptTokens),
    cached_tokens: cachedTokens === null ? null : round(cachedTokens),
    stale_socket_retries: samples.reduce((sum, sample) => sum + sample.staleRetries, 0),
    histogram: histogram(ttfts),
    error_samples: errorSamples(failures),
  };
  if (target.tier === null) result.served_by = servedBy(successes);
  return result;
}

function tokenSource(successes: readonly Success[]): TierResult['token_source'] {
  const sources = new Set(successes.map((sample) => sample.tokenSource));
  if (sources.size === 0) return null;
  return sources.size > 1 ? 'mixed' : [...sources][0];
}

/** Distinct failures, most frequent first, so a flood of one error does not hide another. */
function errorSamples(failures: readonly Failure[]): ErrorSample[] {
  const byKind = new Map<string, ErrorSample>();
  for (const failure of failures) {
    const key = `${failure.reason}\u0000${failure.status}\u0000${failure.message}`;
    const seen = byKind.get(key);
    if (seen) seen.count++;
    else byKind.set(key, { reason: failure.reason, status: failure.status, message: failure.message, count: 1 });
  }
  return [...byKind.values()].sort((a, b) => b.count - a.count).slice(0, MAX_ERROR_SAMPLES);
}

function servedBy(successes: readonly Success[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sample of successes) {
    const tier = sample.servedBy ?? 'unknown';
    counts[tier] = (counts[tier] ?? 0) + 1;
  }
  return counts;
}
