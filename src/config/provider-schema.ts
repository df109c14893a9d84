import { z } from '#zod';
import { isHeaderGlob } from '../util/glob.js';
import { ms } from './duration-schema.js';

// A provider: the server behind a wire, its health checks, start command, headers, price, limits.

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

/** Ollama's own knobs, sent with every request on its native API (a tier's override its provider's). */
export const OllamaOptionsSchema = z.strictObject({
  /** How long the model stays loaded after a request, as Ollama takes it (`30m`, `3600`, `-1`). */
  keep_alive: z.union([z.string().min(1), z.number().int()]).optional(),
  /** The context window (options.num_ctx): Ollama's default truncates long prompts silently. */
  num_ctx: z.number().int().min(1).optional(),
});

/**
 * Client headers never forwarded, whatever `forward_headers` says: credentials (a tier
 * authenticates with its provider's api_key, or with `api_key: from_client` the client's own,
 * see protocols/core/credential.ts), llm-route's own token, and what llm-route sets on each hop.
 */
export const NEVER_FORWARDED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-goog-api-key',
  'x-llm-route-token',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** One `forward_headers` entry: a header name or a `*` glob of them (case-insensitive). */
const ForwardHeaderSchema = z.string().superRefine((pattern, ctx) => {
  if (!isHeaderGlob(pattern)) {
    ctx.addIssue({ code: 'custom', message: 'expected a header name or a glob of header names like x-custom-*' });
  } else if (/^\*+$/.test(pattern)) {
    ctx.addIssue({ code: 'custom', message: 'forwarding every client header is not allowed; name the ones the provider needs, e.g. x-custom-*' });
  } else if (NEVER_FORWARDED_HEADERS.has(pattern.toLowerCase())) {
    ctx.addIssue({
      code: 'custom',
      message: `${pattern.toLowerCase()} is never forwarded (client credentials and per-hop headers stay with llm-route; a tier authenticates with its provider's api_key)`,
    });
  }
});

/** USD per million tokens; `cached_input_per_mtok` defaults to the input price. */
export const PriceSchema = z.strictObject({
  input_per_mtok: z.number().min(0),
  output_per_mtok: z.number().min(0),
  cached_input_per_mtok: z.number().min(0).optional(),
});

/**
 * What llm-route lets through to a provider (docs/shared-state.md):
 * requests and tokens per minute as token buckets holding one second's worth, requests in
 * flight, and how long a request over a limit may wait for room before the tier is skipped.
 */
export const LimitsSchema = z.strictObject({
  rpm: z.number().positive('expected a positive number').optional(),
  tpm: z.number().positive('expected a positive number').optional(),
  concurrency: z.number().int().min(1).optional(),
  queue_ms: ms(0).default(1_000),
});

/** The `api_key` value that means "the client's own credential" (not a key). */
export const FROM_CLIENT = 'from_client';

export const ProviderSchema = z.strictObject({
  /** The wire protocol: openai (Chat Completions), anthropic (Messages), ollama (its native /api/chat), gemini (Gemini's generateContent). */
  type: z.enum(['openai', 'anthropic', 'ollama', 'gemini']),
  base_url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  /** An openai-type server that also serves these APIs itself: requests in them are relayed, not translated. */
  passthrough: z.array(z.enum(['responses', 'messages'])).optional(),
  ollama: OllamaOptionsSchema.optional(),
  /** The provider's key; `from_client`: the client's own credential, forwarded to this provider only (docs/client-credentials.md). */
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

export type ProviderConfig = z.infer<typeof ProviderSchema>;
export type ProviderHealthConfig = z.infer<typeof ProviderHealthSchema>;
export type OllamaOptions = z.infer<typeof OllamaOptionsSchema>;
export type Price = z.infer<typeof PriceSchema>;
export type Limits = z.infer<typeof LimitsSchema>;
