import type { Dispatcher } from 'undici';
import type { Provider, Route, Tier } from '../config/schema.js';
import type { AppContext } from '../control/app-context.js';
import type { ClientRequest } from '../protocols/core/types.js';
import type { ClientCodec } from '../protocols/core/client-codec.js';
import { PromptCount } from '../protocols/core/prompt-tokens.js';
import { type ToolTextReport, toolTextScope, type ToolTextScope } from '../protocols/tool-text/scope.js';
import type { Truncation } from '../fit/truncation.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { SaverMeasure } from '../telemetry/events.js';
import type { ClientLifetime } from '../util/client-lifetime.js';
import { AttemptLog } from './attempt-log.js';
import type { RequestHolds } from './request-holds.js';
import type { CommitPort } from './stream-sink.js';

/** What the routing loop uses of the running app: the config and pools are the request's (its snapshot). */
export type RoutingView = Pick<AppContext, 'gate' | 'telemetry' | 'random' | 'affinity' | 'spaces'>;

/** What a request's exchange gives its routing: who it is, when it came, its client, its pools, and the one way to the client. */
export interface Arrival extends CommitPort {
  readonly id: string;
  readonly codec: ClientCodec;
  /** performance.now() at the request's arrival: TTFT and the route deadline count from here. */
  readonly arrivedAt: number;
  readonly client: ClientLifetime;
  /** The pools of the config the request arrived under (the exchange's snapshot). */
  readonly pools: { get(provider: Provider): Dispatcher };
}

/** Told when the request falls back to its next tier (an Idempotency-Key record: PENDING → EXECUTING_FALLBACK). */
export interface FallbackWatch {
  fallback(): void;
}

/**
 * One request as the routing loop sees it, made once, when its exchange begins (Exchange.begin):
 * what it is and where it goes, what it holds at its tiers, and what it learns on the way —
 * its attempts, its prompt's token count, its tool calls written as text, whether session
 * affinity chose its tier — which its answer reads back from here.
 */
export class RoutingRequest {
  readonly id: string;
  readonly codec: ClientCodec;
  /** Where a stream's first content goes (the exchange): answers the client, returns the sink. */
  readonly port: CommitPort;
  readonly arrivedAt: number;
  readonly client: ClientLifetime;
  readonly pools: { get(provider: Provider): Dispatcher };
  /** Each attempt's record, and (through it) the end of each tier's hold. */
  readonly log: AttemptLog;
  /** The prompt's token count for the fit check, made only if needed; the answer compares it with the usage. */
  readonly prompt: PromptCount;
  /** Session affinity, not a weighted draw, decided which tier the request went to. */
  affinity = false;
  /** What the route's token savers did to the body. */
  readonly savers: SaverMeasure[] | undefined;
  /** The rule that chose the route (its name, else its index); none: the model name did. */
  readonly rule: string | number | undefined;
  /** The body's size as it came: a late check for silent truncation weighs the reported prompt against it. */
  readonly bodyBytes: number;
  /** Told when a tier failed and the next is tried. */
  fallbackWatch: FallbackWatch | null = null;
  private readonly telemetry: TelemetryBus;
  /** The request's tools as tool text reads them, and what each attempt made of calls written as text (undefined: not asked yet). */
  private scope: ToolTextScope | null | undefined;

  constructor(
    arrival: Arrival,
    readonly route: Route,
    readonly request: ClientRequest,
    telemetry: TelemetryBus,
    /** Limits and budgets of the route's tiers; null when none of them has any. */
    readonly holds: RequestHolds | null = null,
    /** What its ingress found out. */
    learned: { savers?: SaverMeasure[]; rule?: string | number; bytes?: number } = {},
  ) {
    this.savers = learned.savers;
    this.rule = learned.rule;
    this.bodyBytes = learned.bytes ?? 0;
    this.id = arrival.id;
    this.codec = arrival.codec;
    this.port = arrival;
    this.arrivedAt = arrival.arrivedAt;
    this.client = arrival.client;
    this.pools = arrival.pools;
    this.prompt = new PromptCount(request);
    this.log = new AttemptLog(this, telemetry, holds);
    this.telemetry = telemetry;
  }

  /** A tier read much less of the prompt than was sent, found after the request's end: said on a line of its own. */
  notePromptTruncated(tier: Tier, { sent, read }: Truncation): void {
    this.telemetry.emit({ type: 'prompt_truncated', id: this.id, route: this.route.name, tier: tier.name, sent, read });
  }

  /** The tool-text scope a call to `tier` reads calls written as text through (null: none), made on first use. */
  toolTextFor(tier: Tier): ToolTextScope | null {
    if (tier.tool_text === 'off') return null;
    if (this.scope === undefined) this.scope = toolTextScope(this.request, this.codec);
    return this.scope;
  }

  /** What each attempt made of tool calls written as text (none read: empty). */
  get toolTextReports(): readonly ToolTextReport[] {
    return this.scope?.reports ?? [];
  }

  /** A tier failed and the next one is tried. */
  fellBack(): void {
    this.fallbackWatch?.fallback();
  }
}
