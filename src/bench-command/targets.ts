import type { Config, Route, Tier } from '../config/schema.js';
import { chatWire } from '../protocols/chat/wire.js';
import { textRequest } from '../protocols/core/neutral.js';
import { nativeWire } from '../protocols/registry.js';
import { isUnsupported, type UpstreamRequest, type WireCodec } from '../protocols/core/types.js';

/** What each benchmark request asks for (its prompt is given per request: see prompts.ts). */
export interface Workload {
  maxTokens: number;
}

/** One row of the benchmark: where its requests go and exactly what they send. */
export interface BenchTarget {
  route: string;
  /** null when benched through a proxy, which picks the tier itself. */
  tier: string | null;
  provider: string | null;
  /** The `model` sent: the tier's model, or the route name through a proxy. */
  model: string;
  /** Targets with the same key share one connection pool: one per provider, or the proxy. */
  poolKey: string;
  origin: string;
  connectTimeoutMs: number;
  /** The whole request, first byte to last; a bench must never hang on a stalled upstream. */
  timeoutMs: number;
  /** The protocol the target speaks: how its answer is read. */
  wire: WireCodec;
  /** The whole request for one prompt. */
  request(prompt: string): UpstreamRequest;
}

/** A selection the config cannot satisfy (unknown route or tier, bad --through): the user's to fix. */
export class BenchUsageError extends Error {
  override readonly name = 'BenchUsageError';
}

/**
 * A tier's total_ms defaults to 5 minutes, sized for one long answer in production; a bench
 * of many short answers that waited that long per stalled request would look hung.
 */
export const MAX_REQUEST_MS = 120_000;
const THROUGH_CONNECT_MS = 5_000;

/** The tiers to bench: every tier, or those of `--route`, narrowed to those named `--tier`. */
export function selectTiers(config: Config, routeName?: string, tierName?: string): Tier[] {
  const tiers = selectRoutes(config, routeName).flatMap((route) => route.tiers);
  if (tierName === undefined) return tiers;
  const named = tiers.filter((tier) => tier.name === tierName);
  if (named.length === 0) {
    const where = routeName === undefined ? 'in any route' : `in route "${routeName}"`;
    const known = [...new Set(tiers.map((tier) => tier.name))].join(', ');
    throw new BenchUsageError(`unknown tier "${tierName}": no tier has that name ${where} (known: ${known})`);
  }
  return named;
}

/** The routes to bench: every chat route, or `--route` (bench measures generation: TTFT and tokens/s, which embeddings have none of). */
export function selectRoutes(config: Config, routeName?: string): Route[] {
  if (routeName === undefined) return [...config.routes.values()].filter((route) => !route.embedding);
  const route = config.routes.get(routeName);
  if (!route) {
    const known = [...config.routes.keys()].join(', ');
    throw new BenchUsageError(`unknown route "${routeName}" (known: ${known})`);
  }
  if (route.embedding) throw new BenchUsageError(`route "${routeName}" is an embeddings route: bench measures generation (TTFT, tokens/s)`);
  return [route];
}

/** Straight to the tier's provider, in its own protocol, built exactly as the proxy would. */
export function directTarget(tier: Tier, workload: Workload): BenchTarget {
  const wire = nativeWire(tier.provider);
  return {
    route: tier.route,
    tier: tier.name,
    provider: tier.provider.name,
    model: tier.model,
    poolKey: `provider:${tier.provider.name}`,
    origin: new URL(tier.provider.base_url).origin,
    connectTimeoutMs: tier.timeouts.connect_ms,
    timeoutMs: Math.min(tier.timeouts.total_ms, MAX_REQUEST_MS),
    wire,
    request: (prompt) => {
      const request = wire.encodeRequest(tier.provider, tier, textRequest(prompt, workload.maxTokens), true, {});
      if (isUnsupported(request)) throw new BenchUsageError(`tier "${tier.name}": ${request.unsupported}`);
      return request;
    },
  };
}

/** Through a running llm-route: the model is the route's name, so the proxy routes it as any client. */
export function throughTarget(route: Route, proxy: URL, workload: Workload, authToken: string | undefined): BenchTarget {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (authToken) headers.authorization = `Bearer ${authToken}`;
  const longestAttempt = Math.max(...route.tiers.map((tier) => tier.timeouts.total_ms));
  return {
    route: route.name,
    tier: null,
    provider: null,
    model: route.name,
    poolKey: `proxy:${proxy.origin}`,
    origin: proxy.origin,
    connectTimeoutMs: THROUGH_CONNECT_MS,
    timeoutMs: Math.min(route.deadline_ms + longestAttempt, MAX_REQUEST_MS),
    wire: chatWire, // the bench speaks Chat Completions to the proxy
    request: (prompt) => ({ method: 'POST', path: chatCompletionsPath(proxy), headers, body: JSON.stringify(chatBody(route.name, prompt, workload)) }),
  };
}

/** `--through` accepts the server's URL with or without the `/v1` that OpenAI clients use. */
export function parseProxyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new BenchUsageError(`--through "${text}": expected the proxy's URL, like http://127.0.0.1:4141`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BenchUsageError(`--through "${text}": expected an http:// or https:// URL`);
  }
  return url;
}

function chatCompletionsPath(proxy: URL): string {
  const base = proxy.pathname.replace(/\/+$/, '');
  return `${base.endsWith('/v1') ? base : `${base}/v1`}/chat/completions`;
}

function chatBody(model: string, prompt: string, workload: Workload): Record<string, unknown> {
  return {
    model,
    messages: [{ role: 'user', content: prompt }],
    max_tokens: workload.maxTokens,
    stream: true,
    // Exact completion counts for tokens/s; without them the bench counts content events.
    stream_options: { include_usage: true },
  };
}
