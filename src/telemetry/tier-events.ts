// What happens to a tier outside any one request: health state, weight, rollback, checks, discovery.

/** A tier's health state changed (healthy, degraded, down). */
export interface TierStateChanged {
  type: 'tier_state';
  route: string;
  tier: string;
  from: 'healthy' | 'degraded' | 'down';
  to: 'healthy' | 'degraded' | 'down';
  reason: string;
  /** While down: when the next half-open trial may run (epoch ms). */
  retryAt?: number;
}

/** A tier's effective weight changed: admin override, kill switch, alert, rollback, TTL expiry, reload. */
export interface WeightChanged {
  type: 'weight';
  route: string;
  tier: string;
  weight: number;
  configured: number;
  source: 'admin' | 'alert' | 'rollback' | 'expired' | 'cleared' | 'reload';
  reason?: string;
  /** An admin override with a TTL: when it lapses (epoch ms). */
  expiresAt?: number;
  /** Everything that holds the weight after this change; `reason` is only words for people. */
  layers: WeightLayers;
}

/**
 * What stands between a tier's configured weight and the one in force: a firing alert or a
 * rollback forces 0; else an admin override (0 is the kill switch) sets it.
 */
export interface WeightLayers {
  /** The admin override, its own weight, and when it lapses (epoch ms; null: no TTL). */
  admin: { weight: number; expiresAt: number | null } | null;
  /** The names of the firing alerts that name this tier. */
  alerts: string[];
  /** Why the tier is rolled back; null when it is not. */
  rollback: string | null;
}

/** Automated rollback tripped: the numbers that did it. */
export interface RolledBack {
  type: 'rollback';
  route: string;
  tier: string;
  reason: 'ttft_p99' | 'error_rate';
  observed: number;
  threshold: number;
  requests: number;
  windowS: number;
}

/** An active health check, warm-up or probe (asked for now: the UI's `p`, the admin API) of one tier finished. */
export interface HealthChecked {
  type: 'health_check';
  route: string;
  tier: string;
  kind: 'check' | 'warmup' | 'probe';
  ok: boolean;
  reachable: boolean;
  modelPresent: boolean | null;
  ttftMs: number | null;
  error?: string;
  /** The server answered 503 while loading its model: neither a failure nor a success. */
  loading?: boolean;
  /** A warm-up that found the server loading and waited for it: how long, so far or in all. */
  waitedMs?: number;
  /** Worth knowing though ok (a server that serves any model name). */
  note?: string;
}

/** What discovery learned of a tier's limits, when it changed (docs/fit.md); `error`: unknown, and why. */
export interface FitDiscovered {
  type: 'fit_discovered';
  route: string;
  tier: string;
  context: number | null;
  context_source: string | null;
  vision: boolean | null;
  tools: boolean | null;
  error?: string;
}

/**
 * A silent truncation found after the answer (the tier's window was unknown, so nothing was
 * counted before sending): its own log line, with the request's id (docs/rules.md).
 */
export interface PromptTruncated {
  type: 'prompt_truncated';
  id: string;
  route: string;
  tier: string;
  sent: number;
  read: number;
}

/** A control the client sent that a tier got without (a reasoning effort it has no room or equivalent for). */
export interface ControlDropped {
  type: 'control_dropped';
  route: string;
  tier: string;
  message: string;
}

/**
 * At start-up (`serve`, `exec`), before traffic: a tier that cannot answer — its server
 * unreachable, or without the tier's model — and where its requests go instead.
 */
export interface TierUnavailable {
  type: 'tier_unavailable';
  route: string;
  tier: string;
  problem: 'unreachable' | 'model_missing';
  /** What the check saw (never a key). */
  detail: string;
  /** The next tier of the route that answered the check (its requests go there), or null when none did. */
  fallback: string | null;
  /** Whether that tier is paid: it has a price, or it is not on the local network. */
  paid: boolean | null;
}
