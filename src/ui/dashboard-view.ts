import type { RequestFinished } from '../telemetry/events.js';
import type { LogLine } from './model/log-lines.js';
import type { Percentiles } from './model/sample-window.js';
import type { TierHealth, TierStats } from './model/tier-stats.js';
import type { Tier } from '../config/schema.js';
import { tierFit } from '../fit/tier-facts.js';
import { loadedOf } from '../health/loaded-models.js';
import { weightText } from './model/weight-layers.js';
import type { UsageTodayView } from './model/usage-today.js';

/** What one frame of the dashboard shows: a plain-data snapshot of DashboardState. */

/** One row of the route table. */
export interface TierView {
  route: string;
  name: string;
  provider: string;
  model: string;
  health: TierHealth;
  healthReason: string;
  /** The weight in force: the tier file's, or as the last weight event said. */
  weight: number;
  /** `100`, `0 (killed)`, `25 (admin, 3m left)`. */
  weightText: string;
  live: number;
  requests: number;
  errors: number;
  failovers: number;
  /** The tier's own TTFT (its ok streaming attempts: attempt start to first token) over the last 60 s (at most 200); null when there were none. */
  ttft: Percentiles | null;
  /** The latest TTFTs in ms, oldest first. */
  ttftHistory: number[];
  /** The share of prompt tokens its server read from its prompt cache, over its last 20 answers that said (0..1); null: none said. */
  cacheHitRate: number | null;
  /** The tier's context window in tokens as the fit check knows it; null: unknown. */
  context: number | null;
  /** Its server's word on the model: loaded, or not (cold); absent when the server says nothing. */
  loaded?: boolean;
}

export interface RouteView {
  name: string;
  /** Requests of this route not yet committed or answered. */
  pending: number;
  tiers: TierView[];
}

/** One finished request, as the recent-requests pane shows it. */
export interface RecentRequest {
  at: number;
  route: string;
  /** The protocol the client spoke: chat, responses, messages, ollama, gemini. */
  protocol: RequestFinished['protocol'];
  /** `local ✗ ttft 2.5s → cloud ✓`; the error when no tier was tried. */
  path: string;
  status: number;
  outcome: RequestFinished['outcome'];
  ttftMs: number | undefined;
  completionTokens: number | undefined;
  /** A stream that broke and was resumed (or tried to be), and why: `resumed a→b by continue after a learned stall`, `resume diverged after a break`. */
  resumed?: string;
  /** A tool call the model wrote as text: `tool text hermes recovered`, `tool text json failed over`. */
  toolText?: string;
  /** Two tiers raced for the first token (hedge_ms): `hedged at 800 ms: cloud won, local stopped`. */
  hedged?: string;
  /** The rule of `rules:` that chose the route (its name or index); absent: the model name did. */
  rule?: string | number;
  /** An embeddings request: `embeddings 32 inputs 768-d 1,024 tokens` (its vectors have no answer tokens). */
  embeddings?: string;
}

/** A tool call written as text held now: its route and tier, its characters so far, since when it is held and since when it is quiet. */
export interface HeldCallView {
  route: string;
  tier: string;
  chars: number;
  heldMs: number;
  quietMs: number;
}

export interface DashboardSnapshot {
  routes: RouteView[];
  /** Arrivals per second over the last 10 s. */
  requestsPerSecond: number;
  /** Committed streams being relayed now. */
  activeStreams: number;
  /** Requests not yet committed or answered. */
  pending: number;
  /** Newest first. */
  recent: RecentRequest[];
  /** Tool calls written as text being held now (docs/tool-text.md): how far each has grown, how long since it last did. */
  heldCalls: HeldCallView[];
  /** Oldest first, the newest last. */
  log: LogLine[];
  /** What clients waited (arrival to commit), over the last 60 s. */
  clientTtft: Percentiles | null;
  /** Today's cost and tokens (UTC day): the usage log's at start plus this session's. */
  today: UsageTodayView;
  /** Set while the usage database is unusable. */
  usageWarning: string | null;
  /** Set while the shared state (Redis) is unreachable. */
  stateWarning: string | null;
}

export interface SnapshotLimits {
  recent?: number;
  log?: number;
  ttftHistory?: number;
}

/** A tier's row: the tier file's tier, with what its events said (none yet: a healthy tier at its configured weight). */
export function tierView(route: string, tier: Tier, stats: TierStats | undefined, now: number, historyLength: number): TierView {
  const weight = stats?.weight ?? tier.weight;
  const loaded = loadedOf(tier);
  return {
    route,
    name: tier.name,
    provider: tier.provider.name,
    model: tier.model,
    health: stats?.health ?? 'healthy',
    healthReason: stats?.healthReason ?? '',
    weight,
    weightText: stats ? weightText(weight, stats.weightLayers, now) : String(weight),
    live: stats?.live ?? 0,
    requests: stats?.requests ?? 0,
    errors: stats?.errors ?? 0,
    failovers: stats?.failovers ?? 0,
    ttft: stats?.ttft.percentiles(now) ?? null,
    ttftHistory: stats?.ttft.recent(historyLength) ?? [],
    cacheHitRate: stats?.cache.hitRate() ?? null,
    context: tierFit(tier).context ?? null,
    ...(loaded === undefined ? {} : { loaded }),
  };
}
