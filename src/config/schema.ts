import { z } from '#zod';
import { ENCODINGS, type Encoding } from '../tokens/count.js';
import { isHeaderGlob } from '../util/glob.js';

/**
 * The tier file's schema: the one source of config types. Every object is strict,
 * so an unknown key is an error (the loader turns it into "did you mean").
 */

const ms = (min = 1) => z.number().int().min(min);

export const TimeoutsSchema = z.strictObject({
  connect_ms: ms().optional(),
  ttft_ms: ms().optional(),
  idle_ms: ms().optional(),
  total_ms: ms().optional(),
  /** TTFT budget for the first request after the tier was idle `cold_after_ms` (a model load). */
  cold_ttft_ms: ms().optional(),
  cold_after_ms: ms().optional(),
});

/** The circuit breaker of a tier: consecutive failures open it for a cooldown that doubles per trip. */
export const CircuitSchema = z.strictObject({
  failures: z.number().int().min(1).optional(),
  cooldown_ms: ms().optional(),
  max_cooldown_ms: ms().optional(),
  /** A TTFT median above this marks the tier degraded (default: 80% of ttft_ms). */
  slow_ttft_ms: ms().optional(),
});

/** Automated rollback: a breach of either threshold over the window sets the tier's weight to 0. */
export const RollbackSchema = z.strictObject({
  ttft_p99_ms: ms().optional(),
  error_rate: z.number().min(0).max(1).optional(),
  window_s: z.number().int().min(1).default(60),
  min_requests: z.number().int().min(1).default(20),
  restore_after_s: z.number().int().min(1).optional(),
});

/** Active health checks of a provider (off unless `interval_ms` is set) and the warm-up of local ones. */
export const ProviderHealthSchema = z.strictObject({
  interval_ms: ms().optional(),
  timeout_ms: ms().default(2_000),
  /** Also send a 1-token request and measure its TTFT. */
  ttft_check: z.boolean().default(false),
  /** A 1-token request at start and every keepalive_ms so a local model stays loaded (default: on for loopback base URLs). */
  warmup: z.boolean().optional(),
  keepalive_ms: ms().default(240_000),
});

/** A command that starts a local provider when it does not answer at `serve` start. */
export const StartSchema = z.strictObject({
  command: z.string().min(1),
  ready_timeout_ms: ms().default(60_000),
});

export const RetrySchema = z.strictObject({
  attempts: z.number().int().min(1).max(10).optional(),
  base_ms: ms(0).optional(),
  max_ms: ms(0).optional(),
});

export const ServerSchema = z.strictObject({
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(4141),
  auth_token: z.string().optional(),
  /** Lets /admin be used from other hosts when presented as a Bearer token. */
  admin_token: z.string().optional(),
  max_body_bytes: z.number().int().min(1).default(10 * 1024 * 1024),
  /** The request line and headers of one request (Node's maxHeaderSize): past it, 431. */
  max_header_bytes: z.number().int().min(1024).max(1024 * 1024).default(16_384),
  /** Headers and body must have arrived within this (slow clients): else 408 and the socket closed. */
  request_timeout_ms: ms(100).default(30_000),
  /** Streaming requests open at once (routing or committed): past it, 503 with Retry-After. */
  max_streams: z.number().int().min(1).default(1000),
  /** Host names (any port) accepted besides loopback ones when auth_token is unset: a reverse proxy's. */
  allowed_hosts: z.array(z.string().regex(/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/i, 'a host name without port or scheme, like llm.example.com').transform((h) => h.toLowerCase())).default([]),
  /** Web origins whose pages may use llm-route (CORS); a request with any other Origin gets 403. */
  cors_origins: z.array(z.string().transform(webOrigin)).default([]),
});

/**
 * An origin as browsers send it in Origin: `http://localhost:3000` (lower case, no default
 * port, no trailing slash), or an app's own scheme (`app://obsidian.md`, `vscode-webview://…`),
 * kept as written. A URL with a path is not an origin.
 */
function webOrigin(text: string, ctx: z.core.$RefinementCtx): string {
  const bare = text.endsWith('/') ? text.slice(0, -1) : text;
  const parts = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@\s]+)$/i.exec(bare);
  const scheme = parts?.[1].toLowerCase();
  if (parts && scheme !== 'http' && scheme !== 'https') return `${scheme}://${parts[2]}`;
  if (parts && URL.canParse(bare)) return new URL(bare).origin;
  ctx.addIssue({ code: 'custom', message: 'expected a web origin, scheme://host[:port] without a path, like http://localhost:3000' });
  return z.NEVER;
}

/** Ollama's own knobs, sent with every request on its native API (a tier's override its provider's). */
export const OllamaOptionsSchema = z.strictObject({
  /** How long the model stays loaded after a request, as Ollama takes it (`30m`, `3600`, `-1`). */
  keep_alive: z.union([z.string().min(1), z.number().int()]).optional(),
  /** The context window (options.num_ctx): Ollama's default truncates long prompts silently. */
  num_ctx: z.number().int().min(1).optional(),
});

/**
 * Client headers never forwarded, whatever `forward_headers` says: credentials (a tier
 * authenticates with its provider's api_key only) and what llm-route sets on each hop.
 */
export const NEVER_FORWARDED_HEADERS: ReadonlySet<string> = new Set([
  'authorization', 'proxy-authorization', 'x-api-key', 'cookie',
  'host', 'content-length', 'content-type', 'accept', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade',
]);

/** One `forward_headers` entry: a header name or a `*` glob of them (case-insensitive). */
const ForwardHeaderSchema = z.string().superRefine((pattern, ctx) => {
  if (!isHeaderGlob(pattern)) {
    ctx.addIssue({ code: 'custom', message: 'expected a header name or a glob of header names like x-custom-*' });
  } else if (/^\*+$/.test(pattern)) {
    ctx.addIssue({ code: 'custom', message: 'forwarding every client header is not allowed; name the ones the provider needs, e.g. x-custom-*' });
  } else if (NEVER_FORWARDED_HEADERS.has(pattern.toLowerCase())) {
    ctx.addIssue({ code: 'custom', message: `${pattern.toLowerCase()} is never forwarded (client credentials and per-hop headers stay with llm-route; a tier authenticates with its provider's api_key)` });
  }
});

/** USD per million tokens; `cached_input_per_mtok` defaults to the input price. */
export const PriceSchema = z.strictObject({
  input_per_mtok: z.number().min(0),
  output_per_mtok: z.number().min(0),
  cached_input_per_mtok: z.number().min(0).optional(),
});

/** The usage log (SQLite): on by default; `path` defaults to the state dir, relative to the tier file's folder. */
export const UsageSchema = z.strictObject({
  path: z.string().min(1).optional(),
  retention_days: z.number().int().min(1).default(90),
  enabled: z.boolean().default(true),
});

/** A spending cap per provider or route and per UTC day or month, in USD or tokens (exactly one; checked in budget-checks). */
export const BudgetSchema = z.strictObject({
  scope: z.string().min(1),
  per: z.enum(['day', 'month']),
  usd: z.number().positive('expected a positive number').optional(),
  tokens: z.number().int().min(1).optional(),
});

/**
 * What llm-route lets through to a provider (SPEC "Idempotency, rate limits, shared state"):
 * requests and tokens per minute as token buckets holding one second's worth, requests in
 * flight, and how long a request over a limit may wait for room before the tier is skipped.
 */
export const LimitsSchema = z.strictObject({
  rpm: z.number().positive('expected a positive number').optional(),
  tpm: z.number().positive('expected a positive number').optional(),
  concurrency: z.number().int().min(1).optional(),
  queue_ms: ms(0).default(1_000),
});

/** Idempotency-Key records: how long a completed answer is kept, how long a duplicate waits for a running one. */
export const IdempotencySchema = z.strictObject({
  ttl_s: z.number().int().min(1).default(86_400),
  wait_ms: ms(0).default(120_000),
});

/** Shared state for several instances: Redis holds idempotency records, limit buckets, budgets and overrides. */
export const StateSchema = z.strictObject({
  redis: z.url({ protocol: /^rediss?$/, error: 'expected a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379/0' }).optional(),
  prefix: z.string().min(1).default('llm-route:'),
});

export const ProviderSchema = z.strictObject({
  /** The wire protocol: openai (Chat Completions), anthropic (Messages), ollama (its native /api/chat). */
  type: z.enum(['openai', 'anthropic', 'ollama']),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  /** An openai-type server that also serves these APIs itself: requests in them are relayed, not translated. */
  passthrough: z.array(z.enum(['responses', 'messages'])).optional(),
  ollama: OllamaOptionsSchema.optional(),
  api_key: z.string().optional(),
  /** PEM file of CAs to trust for this provider's TLS, besides the system's and NODE_EXTRA_CA_CERTS (relative: to the tier file). */
  ca_file: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  /** Client request headers passed on to this provider (names or globs, case-insensitive); none by default. */
  forward_headers: z.array(ForwardHeaderSchema).optional(),
  // Parsed from {} when absent, so its defaults are the only ones.
  health: ProviderHealthSchema.prefault({}),
  start: StartSchema.optional(),
  price: PriceSchema.optional(),
  limits: LimitsSchema.optional(),
});

export const TierSchema = z.strictObject({
  name: z.string().min(1).optional(),
  provider: z.string().min(1),
  model: z.string().min(1),
  timeouts: TimeoutsSchema.optional(),
  weight: z.number().min(0).max(100).default(100),
  retry: RetrySchema.optional(),
  circuit: CircuitSchema.optional(),
  rollback: RollbackSchema.optional(),
  /**
   * The most a request may ask of this tier (larger asks are cut to it: Claude Code asks for
   * 128k), and the max_tokens of a request that sets none where the protocol needs one (Anthropic).
   */
  max_tokens: z.number().int().min(1).optional(),
  ollama: OllamaOptionsSchema.optional(),
  /** The encoding token savers measure with when this is the route's first tier. */
  tokenizer: z.enum(ENCODINGS).optional(),
  /** Replaces the provider's price for this tier. */
  price: PriceSchema.optional(),
  /** Takes a trailing assistant message as the start of its answer (mid-stream recovery continues there); default by type, see load.ts. */
  prefill: z.boolean().optional(),
  /** Route by fit (src/fit/): the model's context window in tokens; auto = discovered from the server. */
  context: z.union([z.literal('auto'), z.number().int().min(1)]).optional(),
  /** The user's cap: a prompt of more tokens skips this tier (a slow prefill). */
  max_prompt_tokens: z.number().int().min(1).optional(),
  /** Whether the model takes images / tools; auto = discovered (unknown: sent). */
  vision: z.union([z.literal('auto'), z.boolean()]).optional(),
  tools: z.union([z.literal('auto'), z.boolean()]).optional(),
});

/**
 * Token savers and their options. A `savers:` entry is a name or a one-key map `{ name: options }`;
 * entries are checked by src/savers/config.ts (names with "did you mean", options against these).
 */
export const SAVER_OPTIONS = {
  whitespace: z.strictObject({ tool_results: z.boolean().default(false) }),
  dedupe_system: z.strictObject({}),
  minify_tool_json: z.strictObject({}),
  truncate_tool_output: z.strictObject({ max_tokens: z.number().int().min(32) }),
  trim_history: z.strictObject({ max_tokens: z.number().int().min(1), keep_last: z.number().int().min(1).default(6) }),
};
export type SaverName = keyof typeof SAVER_OPTIONS;
export type SaverSpec = { [K in SaverName]: { name: K; options: z.output<(typeof SAVER_OPTIONS)[K]> } }[SaverName];
const SaverListSchema = z.array(z.unknown());

export const RouteSchema = z.strictObject({
  tiers: z.array(TierSchema).min(1, 'a route needs at least one tier'),
  /** Other model names this route answers to, as globs (`claude-*`); the exact route name wins first. */
  aliases: z.array(z.string().min(1)).optional(),
  timeouts: TimeoutsSchema.optional(),
  retry: RetrySchema.optional(),
  circuit: CircuitSchema.optional(),
  deadline_ms: ms().default(120_000),
  savers: SaverListSchema.optional(),
  /** A committed stream that breaks or stalls: `error` ends it with the protocol's error event; `resume` recovers it (src/proxy/resume/). */
  on_break: z.enum(['error', 'resume']).default('error'),
  resume: z.strictObject({ max: z.number().int().min(0).max(1).default(1) }).optional(),
});

export const ConfigSchema = z.strictObject({
  version: z.literal(1, 'expected version: 1'),
  server: ServerSchema.prefault({}),
  providers: z.record(z.string(), ProviderSchema),
  routes: z.record(z.string(), RouteSchema),
  /** The route of a request whose `model` is missing or names no route or alias. */
  default_route: z.string().min(1).optional(),
  /** The savers of every route without a `savers:` of its own. */
  savers: SaverListSchema.optional(),
  usage: UsageSchema.optional(),
  budgets: z.array(BudgetSchema).optional(),
  idempotency: IdempotencySchema.prefault({}),
  state: StateSchema.prefault({}),
});

export type RawConfig = z.infer<typeof ConfigSchema>;
export type ServerConfig = z.infer<typeof ServerSchema>;
export type ProviderConfig = z.infer<typeof ProviderSchema>;
export type TimeoutsConfig = z.infer<typeof TimeoutsSchema>;
export type RetryConfig = z.infer<typeof RetrySchema>;
export type CircuitConfig = z.infer<typeof CircuitSchema>;
export type RollbackConfig = z.infer<typeof RollbackSchema>;
export type ProviderHealthConfig = z.infer<typeof ProviderHealthSchema>;
export type OllamaOptions = z.infer<typeof OllamaOptionsSchema>;

/** max_tokens for Anthropic requests that set none (the API requires one). */
export const DEFAULT_MAX_TOKENS = 4096;
export type Price = z.infer<typeof PriceSchema>;
export type BudgetConfig = z.infer<typeof BudgetSchema>;
export type Limits = z.infer<typeof LimitsSchema>;
export type IdempotencyConfig = z.infer<typeof IdempotencySchema>;
export type StateConfig = z.infer<typeof StateSchema>;

/** cold_ttft_ms defaults to the tier's ttft_ms (no separate cold budget) when unset. */
export const DEFAULT_TIMEOUTS: Required<Omit<TimeoutsConfig, 'cold_ttft_ms'>> = {
  connect_ms: 2_000,
  ttft_ms: 10_000,
  idle_ms: 30_000,
  total_ms: 300_000,
  cold_after_ms: 300_000, // Ollama unloads an idle model after 5 minutes by default
};

export const DEFAULT_CIRCUIT: Required<Omit<CircuitConfig, 'slow_ttft_ms'>> = { failures: 3, cooldown_ms: 1_000, max_cooldown_ms: 8_000 };

export const DEFAULT_RETRY: Required<RetryConfig> = { attempts: 2, base_ms: 250, max_ms: 4_000 };

/** A provider after loading: its name is known and its secrets are resolved. */
export interface Provider extends Omit<ProviderConfig, 'health'> {
  name: string;
  /** The base URL is on this machine (loopback): a local model server. */
  local: boolean;
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
  /** Continues a trailing assistant message (mid-stream recovery by continuation). */
  prefill: boolean;
  /** What the tier file says of the model's limits (SPEC "Route by fit"); 'auto': discovered. */
  fit: TierFitConfig;
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
  /** Things that are allowed but probably wrong (file:line:col lines): `validate` prints them. */
  warnings: string[];
  usage: UsageConfig;
  budgets: Budget[];
  idempotency: IdempotencyConfig;
  /** `redis` absent: everything shared is embedded (in-process + the usage database). */
  state: StateConfig;
}
