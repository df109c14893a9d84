import type { Encoding } from '../tokens/count.js';
import type { OllamaOptions, Price, ProviderConfig, ProviderHealthConfig } from './provider-schema.js';
import type { RuleWhen } from './rule-schema.js';
import type { SaverSpec } from './saver-options.js';
import type { ServerConfig } from './server-schema.js';
import type { StallConfig } from './stall-schema.js';
import type { IdempotencyConfig, StateConfig } from './stores-schema.js';
import type { TelemetryConfig } from './telemetry-schema.js';
import type { CircuitConfig, RetryConfig, RollbackConfig, TimeoutsConfig } from './tier-schema.js';

// The config as the running proxy reads it: the tier file after loading (load.ts).

/** A provider after loading: its name is known and its secrets are resolved. */
export interface Provider extends Omit<ProviderConfig, 'health'> {
  name: string;
  /** The base URL is on this machine (loopback): a local model server. */
  local: boolean;
  /** `api_key: from_client`: sent the client's own credential (and no key of its own); health checks send none. */
  from_client?: true;
  health: Required<Omit<ProviderHealthConfig, 'interval_ms'>> & { interval_ms: number | undefined };
}

/** A tier after loading: defaults merged, provider resolved, name unique in its route. */
export interface Tier {
  route: string;
  name: string;
  index: number;
  provider: Provider;
  model: string;
  weight: number;
  timeouts: Required<TimeoutsConfig>;
  retry: Required<RetryConfig>;
  circuit: Required<CircuitConfig>;
  rollback: RollbackConfig | null;
  /** A request's max_tokens when it sets none and the protocol needs one. */
  max_tokens: number;
  /** Set when the tier file sets max_tokens: the most a request may ask of this tier. */
  max_tokens_cap: number | undefined;
  /** The provider's Ollama options with the tier's on top. */
  ollama: OllamaOptions;
  tokenizer: Encoding;
  /** USD per 1M tokens: the tier's own `price`, else its provider's; absent: unpriced (local). */
  price?: Price;
  /** Continues a trailing assistant message (mid-stream resume by continuation). */
  prefill: boolean;
  /** Load the model at serve's and exec's start. */
  warm: boolean;
  /** What the tier file says of the model's limits (docs/fit.md); 'auto': discovered. */
  fit: TierFitConfig;
  /** Tool calls written as text: recovered (auto, the default when absent) or relayed as text (off). */
  tool_text?: 'auto' | 'off';
  /** A tier of an embeddings route: its vector space, and the most inputs one request to it carries (undefined: its type's default). */
  embedding?: TierEmbedding;
}

export interface TierEmbedding {
  space: string;
  max_batch: number | undefined;
}

export interface TierFitConfig {
  context: number | 'auto';
  max_prompt_tokens: number | undefined;
  vision: boolean | 'auto';
  tools: boolean | 'auto';
}

export interface Route {
  name: string;
  tiers: Tier[];
  deadline_ms: number;
  aliases: string[];
  /** Token savers in file order (the top-level default when the route has none of its own). */
  savers: SaverSpec[];
  /** What a committed stream that breaks does: end with an error, or resume (at most `resume_max` times). */
  on_break: 'error' | 'resume';
  resume_max: number;
  /** With `on_break: resume`: when a committed stream's silence is a stall, judged by its own pace. */
  stall: StallConfig;
  /** Streams: the next tier starts as well when the one being tried has no first content after this long; null: no hedging. */
  hedge_ms: number | null;
  /** `local_only: true`: only tiers on the local network (src/rules/local-only.ts); absent: false. */
  local_only?: boolean;
  /** `kind: embeddings`: the route takes embedding requests only, its tiers all in this vector space (docs/embeddings.md); absent: a chat route. */
  embedding?: { space: string };
}

/** What a route answers: chat and generation, or embeddings (a request of the other kind is a 400). */
export type RouteKind = 'chat' | 'embeddings';

/** A rule of `rules:` after loading (its route exists: cross-checks vouch for it). */
export interface Rule {
  index: number;
  /** What the request log and `explain` call it: its `name:`, else its 0-based index. */
  label: string | number;
  route: string;
  when: RuleWhen;
}

/** The usage log after loading: `path` is absolute, or null for the default in the state dir (see usage/paths.ts). */
export interface UsageConfig {
  path: string | null;
  retention_days: number;
  enabled: boolean;
}

/** A budget after loading: one unit, its limit in that unit. */
export interface Budget {
  scope: string;
  per: 'day' | 'month';
  unit: 'usd' | 'tokens';
  limit: number;
}

/** The config the running proxy uses. */
export interface Config {
  file: string;
  server: ServerConfig;
  providers: Map<string, Provider>;
  routes: Map<string, Route>;
  /** `default_route`: the route for a missing or unmatched `model`; null without one (400 / 404). */
  default_route?: string | null;
  /** `rules:` in file order; absent or empty: the model name alone picks the route. */
  rules?: Rule[];
  /** Things that are allowed but probably wrong (file:line:col lines): `validate` prints them. */
  warnings: string[];
  usage: UsageConfig;
  budgets: Budget[];
  idempotency: IdempotencyConfig;
  /** `redis` absent: everything shared is embedded (in-process + the usage database). */
  state: StateConfig;
  /** `telemetry:` as written (empty without one): src/config/trace-export.ts adds the OTEL_* variables. */
  telemetry: TelemetryConfig;
}
