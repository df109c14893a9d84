import type { Route, Tier } from '../config/schema.js';
import { tierKind } from '../config/tier-kind.js';
import { recordLoaded } from '../health/loaded-models.js';
import { warmModel } from '../health/warm-models.js';
import type { ClientRequest, LoadAsk, ModelLoading } from '../protocols/core/client-codec.js';
import { bodyObject } from '../protocols/core/json.js';
import { classifyStatus } from '../protocols/errors/classify-status.js';
import { speaks, wireFor } from '../protocols/registry.js';
import { redactSecrets } from '../providers/redact-secrets.js';
import type { Exchange, ProxyView } from './exchange.js';

/** What the tier asked did with a load, and its answer when it is the one the client gets. */
interface Tried {
  tier: Tier;
  ok: boolean;
  error?: string;
  answer?: { contentType: string; body: Buffer };
}

/**
 * A request that asks only that its model be loaded or unloaded (docs/protocols.md, "A
 * preload"). It is no generation: it never enters the routing loop, so it never reaches a cloud
 * tier and no tier's health counts it. The route's first local tier that is up and speaks the
 * client's protocol is sent it, and its answer goes back as it came; without one, a load warms
 * the route's first local tier that is up, as at start. Otherwise — and when the tier asked
 * fails — llm-route answers it itself: the route can still answer whatever comes next.
 */
export async function serveModelLoad(
  exchange: Exchange,
  app: Pick<ProxyView, 'gate' | 'telemetry'>,
  route: Route,
  request: ClientRequest,
  loading: ModelLoading,
  asked: LoadAsk,
): Promise<void> {
  const startedAt = performance.now();
  // Not announced: a load is no request for an answer (no request_start/request_end, no usage row).
  exchange.begin(route, request, { announce: false });
  const up = route.tiers.filter((tier) => tierKind(tier) === 'local' && app.gate.allows(tier));
  const speaker = up.find((tier) => speaks(tier.provider, request.protocol));
  let tried: Tried | null = null;
  if (speaker) tried = await relayLoad(exchange, speaker, request, asked);
  else if (asked === 'load' && up.length > 0) tried = await warm(exchange, up[0]);
  if (exchange.client.aborted) exchange.drop();
  else if (tried?.answer) exchange.respond({ status: 200, ...tried.answer }, tried.tier, 1);
  else exchange.respondJson(200, loading.answer(request.model, asked));
  app.telemetry.emit({
    type: 'model_load',
    id: exchange.id,
    route: route.name,
    asked,
    tier: tried?.tier.name ?? null,
    answeredBy: tried?.answer ? 'tier' : 'llm-route',
    ok: tried?.ok ?? true,
    error: tried?.error,
    durationMs: performance.now() - startedAt,
  });
}

/** The client's request, relayed to a tier that speaks its protocol; its answer kept when it is the load's. */
async function relayLoad(exchange: Exchange, tier: Tier, request: ClientRequest, asked: LoadAsk): Promise<Tried> {
  const upstream = wireFor(tier.provider, request.protocol).relayRequest(tier.provider, tier, request.body, request.stream, request.headers, request.endpoint);
  // A load takes as long as a cold first token may: the tier's cold TTFT budget bounds it. The client leaving ends it.
  const stop = new AbortController();
  const leave = (): void => stop.abort(new Error('the client went away'));
  exchange.client.onAbort(leave);
  const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(loadTimeoutMs(tier))]);
  try {
    const { origin } = new URL(tier.provider.base_url);
    const { method, path, headers, body: sent } = upstream;
    const res = await exchange.pools.get(tier.provider).request({ origin, method, path, headers, body: sent, signal });
    const body = Buffer.from(await res.body.arrayBuffer());
    const answer = bodyObject(body);
    if (res.statusCode < 200 || res.statusCode >= 300 || answer?.done !== true) {
      const words = res.statusCode < 300 ? 'not a load answer' : classifyStatus(res.statusCode, body.toString('utf8')).message;
      return { tier, ok: false, error: redactSecrets(`HTTP ${res.statusCode}: ${words}`, tier.provider) };
    }
    // The server's own word on what it holds now: a warm tier's next request gets the warm TTFT budget.
    recordLoaded(tier, asked === 'load');
    return { tier, ok: true, answer: { contentType: String(res.headers['content-type'] ?? 'application/json'), body } };
  } catch (error) {
    const why = signal.aborted && !stop.signal.aborted ? `no answer within ${loadTimeoutMs(tier)} ms` : (error as Error).message;
    return { tier, ok: false, error: redactSecrets(why, tier.provider) };
  } finally {
    exchange.client.offAbort(leave);
  }
}

/** A tier that speaks another protocol loads its model as `warm: true` has it do at start (health/warm-models.ts). */
async function warm(exchange: Exchange, tier: Tier): Promise<Tried> {
  const warmed = await warmModel(tier, { timeoutMs: loadTimeoutMs(tier), dispatcher: exchange.pools.get(tier.provider) });
  return warmed.ok ? { tier, ok: true } : { tier, ok: false, error: warmed.message };
}

function loadTimeoutMs(tier: Tier): number {
  return tier.timeouts.cold_ttft_ms + tier.timeouts.connect_ms;
}
