import { CacheWindow } from './cache-window.js';
import { SampleWindow } from './sample-window.js';
import { NO_LAYERS, type WeightLayers } from './weight-layers.js';

export type TierHealth = 'healthy' | 'degraded' | 'down';

/** Everything the dashboard has counted for one tier of one route since it started. */
export class TierStats {
  health: TierHealth = 'healthy';
  healthReason = '';
  /** The weight in force as the last weight event said; null: the tier file's. */
  weight: number | null = null;
  weightLayers: WeightLayers = NO_LAYERS;
  /** A warm-up succeeded once: later keep-alive ones are routine. */
  warmedUp = false;
  /** A rollback event was just logged with its numbers: its weight event need not be. */
  rollbackLogged = false;
  /** A silent truncation was shown once: later ones are in the log and the metric. */
  truncationWarned = false;
  /** Committed streams this tier is relaying now. */
  live = 0;
  /** Requests that reached this tier (their first attempt on it). */
  requests = 0;
  /** Failed attempts and broken streams that were the tier's fault (payload rejections are not). */
  errors = 0;
  /** Requests that moved on from this tier to the next. */
  failovers = 0;
  readonly ttft = new SampleWindow(200, 60_000);
  /** Its server's prompt-cache hits over its last answers that reported them. */
  readonly cache = new CacheWindow();
}

/** TierStats by route and tier name, created on first mention. */
export class TierStatsTable {
  private readonly byKey = new Map<string, TierStats>();

  get(route: string, tier: string): TierStats {
    const key = `${route}\u0000${tier}`;
    let stats = this.byKey.get(key);
    if (!stats) {
      stats = new TierStats();
      this.byKey.set(key, stats);
    }
    return stats;
  }

  /** Without creating an entry: for reads while rendering. */
  peek(route: string, tier: string): TierStats | undefined {
    return this.byKey.get(`${route}\u0000${tier}`);
  }
}
