import type { Dispatcher } from 'undici';
import type { Provider, Route } from '../config/schema.js';
import type { AppContext } from '../control/app-context.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { ClientCodec } from '../protocols/core/client-codec.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import type { PromptCount } from '../protocols/core/prompt-tokens.js';
import type { CommitPort } from './stream-sink.js';
import type { RequestHolds } from './request-holds.js';

/** What the routing loop uses of the running app: the config and pools are the request's (its snapshot). */
export type RoutingView = Pick<AppContext, 'gate' | 'telemetry' | 'random' | 'affinity'>;

/** One request as the routing loop sees it. */
export interface RoutingRequest {
  id: string;
  route: Route;
  request: ClientRequest;
  codec: ClientCodec;
  /** Where a stream's first content goes (the exchange): answers the client, returns the sink. */
  port: CommitPort;
  /** performance.now() at the request's arrival: TTFT and the route deadline count from here. */
  arrivedAt: number;
  client: ClientLifetime;
  /** The pools of the config the request arrived under (the exchange's snapshot). */
  pools: { get(provider: Provider): Dispatcher };
  /** Limits and budgets of the route's tiers; absent when none of them has any. */
  holds?: RequestHolds | null;
  /** A tier failed and the next one is tried (an idempotent request's record says so). */
  onFallback?: () => void;
  /** The session's tier decided a weighted draw (the request's log line says so). */
  onAffinity?: () => void;
  /** The prompt's token count for the fit check, made only if needed; the caller compares it with the usage after. */
  prompt?: PromptCount;
}
