import { performance } from 'node:perf_hooks';
import { getGlobalDispatcher, request } from 'undici';
import type { Tier } from '../config/schema.js';
import { isRecord } from '../util/is-record.js';
import { adapterFor } from '../providers/index.js';
import { EVENT_CONTENT, EVENT_ERROR, type EventFacts } from '../providers/types.js';
import { SseParser } from '../sse/parser.js';
import { sendRetryingStale } from '../util/stale-socket-pool.js';
import { CheckFailure } from './check-failure.js';
import type { Http } from './deadline.js';
import { isLoadingAnswer } from './model-list.js';

// Step 2 of a tier check: time to first token.

const PING = { messages: [{ role: 'user', content: 'ping' }], max_tokens: 1, stream: true };
// OpenAI's reasoning models refuse max_tokens and ask for this one instead.
const PING_REASONING = { messages: PING.messages, max_completion_tokens: 1, stream: true };

type Outcome = { firstTokenAt: number } | { error: string };

/** The server answered 503 while loading its model: not ready yet. */
export class StillLoading extends CheckFailure {
  constructor(readonly serverMessage: string) {
    super(`still loading (HTTP 503: ${serverMessage})`);
  }
}

/** Milliseconds from sending a 1-token streaming request to its first content event. */
export function timeFirstToken(tier: Tier, http: Http): Promise<number> {
  return streamFirstToken(tier, PING, http);
}

async function streamFirstToken(tier: Tier, body: Record<string, unknown>, http: Http): Promise<number> {
  const adapter = adapterFor(tier.provider.type);
  const upstream = adapter.buildChatRequest(tier.provider, tier, body, true);
  const url = new URL(upstream.path, new URL(tier.provider.base_url).origin);
  let sentAt = performance.now();
  // A pooled socket the server had closed is retried once on a new one, and timed from there.
  const response = await sendRetryingStale(http.dispatcher ?? getGlobalDispatcher(), url.origin, (dispatcher) => {
    sentAt = performance.now();
    return request(url, { method: 'POST', headers: upstream.headers, body: upstream.body, signal: http.signal, dispatcher });
  });
  if (response.statusCode < 200 || response.statusCode >= 300) {
    const text = await response.body.text();
    if (response.statusCode === 400 && 'max_tokens' in body && /max_completion_tokens/.test(text)) {
      return streamFirstToken(tier, PING_REASONING, http);
    }
    const verdict = adapter.classifyStatus(response.statusCode, text, response.headers);
    if (isLoadingAnswer(response.statusCode, verdict.message)) throw new StillLoading(verdict.message);
    throw new CheckFailure(`the 1-token request answered HTTP ${response.statusCode}: ${verdict.message}`);
  }

  const parser = new SseParser();
  const facts: EventFacts = { flags: 0, usage: undefined };
  // Widened on purpose: only the callback assigns it, which TypeScript's narrowing cannot see.
  let outcome = null as Outcome | null;
  const onEvent = (_raw: Buffer, data: string | null): void => {
    if (outcome !== null || data === null) return;
    adapter.inspectEvent(data, facts);
    if (facts.flags & EVENT_ERROR) outcome = { error: streamErrorMessage(data) };
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

function streamErrorMessage(data: string): string {
  try {
    const parsed: unknown = JSON.parse(data);
    const error = isRecord(parsed) ? parsed.error : undefined;
    if (isRecord(error) && typeof error.message === 'string') return error.message;
    if (typeof error === 'string') return error;
  } catch {
    // inspectEvent already parsed it; unreachable in practice
  }
  return data.slice(0, 200);
}
