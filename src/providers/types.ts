import type { IncomingHttpHeaders } from 'node:http';
import type { Provider, Tier } from '../config/schema.js';

export type { Usage } from '../protocols/usage.js';
import type { Usage } from '../protocols/usage.js';

/** What one SSE event means to the router; filled in place to avoid a per-event object. */
export interface EventFacts {
  /** Bit set of EVENT_* flags. */
  flags: number;
  usage: Usage | undefined;
}

export const EVENT_CONTENT = 1; // commits the stream: content, reasoning, tool call or finish
export const EVENT_FINISH = 2; // carries a finish_reason
export const EVENT_USAGE = 4; // carries usage
export const EVENT_USAGE_ONLY = 8; // nothing but usage (hidden from clients that did not ask)
export const EVENT_ERROR = 16; // an error object sent inside the stream
export const EVENT_MALFORMED = 32; // not valid JSON
export const EVENT_DONE = 64; // the [DONE] sentinel

/** An upstream request ready to dispatch on the provider's pool. */
export interface UpstreamRequest {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Whose fault a non-2xx answer is, decided by the adapter that understands the body. */
export interface StatusVerdict {
  reason: string;
  /** true: the tier's fault, try the next one; false: the payload's fault, tell the client. */
  failover: boolean;
  /** Worth another try on the same tier (429, 500, 502, 503, 504). */
  retryable: boolean;
  message: string;
}

/**
 * A wire protocol. Small pure functions; the routing core calls only these, so a new
 * protocol (Anthropic Messages) plugs in without touching it.
 */
export interface ProviderAdapter {
  /** Builds the upstream call for an OpenAI-shaped chat body. */
  buildChatRequest(provider: Provider, tier: Tier, body: Record<string, unknown>, stream: boolean): UpstreamRequest;
  /** Reads one SSE data payload into `out`. */
  inspectEvent(data: string, out: EventFacts): void;
  /** Classifies a non-2xx upstream answer. */
  classifyStatus(status: number, body: string, headers: IncomingHttpHeaders): StatusVerdict;
  /** Usage from a whole non-streaming response body, if it reports any; 'not_json' for a body that is not a JSON answer. */
  readUsage(body: Buffer): Usage | undefined | 'not_json';
}
