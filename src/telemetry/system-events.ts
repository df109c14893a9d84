// The process around the proxy: tier file reloads, started providers, the usage database and shared state.

/** The tier file was reloaded (ok), or a change was rejected (problems as file:line:col lines). */
export interface ConfigReloaded {
  type: 'reload';
  ok: boolean;
  file: string;
  problems?: string[];
  routes?: number;
}

/** Output of a local provider started by llm-route (`start:`), line by line. */
export interface ProviderOutput {
  type: 'provider_output';
  provider: string;
  stream: 'stdout' | 'stderr' | 'status';
  line: string;
}

/**
 * The usage database cannot be used (locked, corrupt, full, unwritable): said once per episode.
 * The proxy keeps serving; rows are dropped (and counted) until the database reopens.
 */
export interface UsageDegraded {
  type: 'usage_degraded';
  path: string;
  error: string;
}

/** The usage database is usable again; `dropped` rows were lost meanwhile. */
export interface UsageRecovered {
  type: 'usage_recovered';
  path: string;
  dropped: number;
}

/**
 * The shared state (Redis) cannot be reached: said once per episode. The instance keeps
 * serving on local state: limits and budgets on its own counters, keys deduplicated here only.
 */
export interface StateDegraded {
  type: 'state_degraded';
  backend: 'redis';
  /** host:port/db, never a password. */
  target: string;
  error: string;
}

/** The shared state is reachable again; this instance has rejoined it. */
export interface StateRecovered {
  type: 'state_recovered';
  backend: 'redis';
  target: string;
  /** How long this instance served on local state. */
  downMs: number;
}

/**
 * Spans cannot be exported: the collector is unreachable or refuses them, or the settings ask
 * for what llm-route cannot do. Said once per episode; requests are unaffected, spans are
 * dropped (and counted) until an export succeeds. `endpoint`: no credentials, no query.
 */
export interface TraceExportFailing {
  type: 'trace_export_failing';
  endpoint: string;
  error: string;
}

/** The collector takes spans again; `dropped` were lost meanwhile. */
export interface TraceExportRecovered {
  type: 'trace_export_recovered';
  endpoint: string;
  dropped: number;
}
