import { performance } from 'node:perf_hooks';
import type { Dispatcher } from 'undici';
import { getGlobalDispatcher, request } from '../util/undici.js';
import type { Tier } from '../config/schema.js';
import { errorText } from '../util/error-text.js';
import { classifyStatus } from '../protocols/errors/classify-status.js';
import { textRequest } from '../protocols/core/neutral.js';
import { embeddingWire, nativeWire } from '../protocols/registry.js';
import { profileOf } from '../protocols/profiles.js';
import { EVENT_CONTENT, EVENT_ERROR, newFacts } from '../protocols/core/event-facts.js';
import { isUnsupported, type UpstreamRequest, type WireCodec } from '../protocols/core/types.js';
import { sendRetryingStale } from '../util/stale-socket-pool.js';
import { CheckFailure } from './check-failure.js';
import type { Http } from './deadline.js';
import { isLoadingAnswer } from './upstream-models.js';

// Step 2 of a tier check: time to first token.

const PING = textRequest('ping', 1);

type Outcome = { firstTokenAt: number } | { error: string };

/** The server answered 503 while loading its model: not ready yet. */
export class StillLoading extends CheckFailure {
  constructor(readonly serverMessage: string) {
    super(`still loading (HTTP 503: ${serverMessage})`);
  }
}

/**
 * Milliseconds from sending a 1-token streaming request to its first content event; for a tier of
 * an embeddings route, to the whole answer of a 1-input embeddings request (it answers no chat).
 */
export async function timeFirstToken(tier: Tier, http: Http): Promise<number> {
  if (tier.embedding) return timeEmbedding(tier, http);
  // The tier's own protocol, as the proxy would send it (a remote OpenAI gets max_completion_tokens).
  const wire = nativeWire(tier.provider);
  const upstream = wire.encodeRequest(tier.provider, tier, PING, true, {});
  if (isUnsupported(upstream)) throw new CheckFailure(upstream.unsupported);
  return streamFirstToken(tier, wire, upstream, http, true);
}

/** The check's request sent, and when (a pooled socket the server had closed is retried once on a new one, and timed from there). */
async function sendTimed(tier: Tier, upstream: UpstreamRequest, http: Http): Promise<{ response: Dispatcher.ResponseData; sentAt: number }> {
  const url = new URL(upstream.path, new URL(tier.provider.base_url).origin);
  let sentAt = performance.now();
  const response = await sendRetryingStale(
    http.dispatcher ?? getGlobalDispatcher(),
    url.origin,
    (dispatcher) => request(url, { method: 'POST', headers: upstream.headers, body: upstream.body, signal: http.signal, dispatcher }),
    { onStale: () => (sentAt = performance.now()) },
  );
  return { response, sentAt };
}

async function streamFirstToken(tier: Tier, wire: WireCodec, upstream: UpstreamRequest, http: Http, firstTry: boolean): Promise<number> {
  const { response, sentAt } = await sendTimed(tier, upstream, http);
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = await response.body.text();
    // OpenAI's reasoning models refuse max_tokens (a local OpenAI-compatible gateway passes that on): ask their way.
    if (firstTry && response.statusCode === 400 && /max_completion_tokens/.test(text) && upstream.body.includes('"max_tokens"')) {
      return streamFirstToken(tier, wire, { ...upstream, body: upstream.body.replace('"max_tokens"', '"max_completion_tokens"') }, http, false);
    }
    const verdict = classifyStatus(response.statusCode, text);
    if (isLoadingAnswer(response.statusCode, verdict.message)) throw new StillLoading(verdict.message);
    throw new CheckFailure(`the 1-token request answered HTTP ${response.statusCode}: ${verdict.message}`);
  }

  const parser = wire.framer();
  const facts = newFacts();
  const reader = wire.reader();
  // Widened on purpose: only the callback assigns it, which TypeScript's narrowing cannot see.
  let outcome = null as Outcome | null;
  const onEvent = (_raw: Buffer, data: string | null): void => {
    if (outcome !== null || data === null) return;
    reader.read(data, facts);
    if (facts.flags & EVENT_ERROR) outcome = { error: errorText(data) ?? 'an empty error event' };
    else if (facts.flags & EVENT_CONTENT) outcome = { firstTokenAt: performance.now() };
  };
  for await (const chunk of response.body) {
    parser.push(chunk as Buffer, onEvent);
    // Leaving the loop destroys the body, which aborts the request: the rest of the answer is not needed.
    if (outcome !== null) break;
  }
  if (outcome === null) parser.flush(onEvent);
  if (outcome === null) throw new CheckFailure('the 1-token stream ended before its first token');
  if ('error' in outcome) throw new CheckFailure(`the 1-token stream sent an error: ${outcome.error}`);
  return outcome.firstTokenAt - sentAt;
}

/**
 * A tier of an embeddings route is checked (and warmed) with what it serves: one input embedded,
 * timed to its whole answer (an embedding model answers no chat). Milliseconds from sending it to
 * the answer's end.
 */
async function timeEmbedding(tier: Tier, http: Http): Promise<number> {
  const wire = embeddingWire(profileOf(tier.provider).wire);
  if (!wire) throw new CheckFailure(`a provider of type ${tier.provider.type} has no embeddings API`);
  const upstream = wire.request(tier.provider, tier, { inputs: ['ping'], offset: 0, encoding: 'float', truncate: true }, {});
  if (isUnsupported(upstream)) throw new CheckFailure(upstream.unsupported);
  const { response, sentAt } = await sendTimed(tier, upstream, http);
  const body = Buffer.from(await response.body.arrayBuffer());
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const verdict = classifyStatus(response.statusCode, body.toString('utf8'));
    if (isLoadingAnswer(response.statusCode, verdict.message)) throw new StillLoading(verdict.message);
    throw new CheckFailure(`the 1-input embeddings request answered HTTP ${response.statusCode}: ${verdict.message}`);
  }
  const scan = wire.scan(body);
  if (scan === 'not_json' || scan.count !== 1) throw new CheckFailure('the 1-input embeddings request answered no vector');
  return performance.now() - sentAt;
}
