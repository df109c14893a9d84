import * as prom from './prom.js';
import { CounterCells, GaugeCells } from './cells.js';
import { allTiers } from '../config/all-tiers.js';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from './bus.js';
import type { TelemetryEvent } from './events.js';
import { saverMetrics } from './saver-metrics.js';

const STATE_VALUE = { healthy: 0, degraded: 1, down: 2 } as const;

type Labelled<T> = { labels(...values: string[]): T };

/**
 * Prometheus metrics (names fixed in docs/operations.md), fed only by telemetry events. Label children are
 * cached so the request path never re-hashes label sets; counters and gauges are cells
 * (cells.ts) that prom-client reads at scrape time.
 */
export class Metrics {
  readonly registry = new prom.Registry();
  private readonly children: Tree = new Map();
  private readonly ttft = new prom.Histogram({
    name: 'llm_time_to_first_token_seconds',
    help: 'Time from the request reaching llm-route to the committed first content event (streams).',
    labelNames: ['route', 'tier'],
    buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10],
    registers: [this.registry],
  });
  private readonly chunkErrors = new CounterCells({
    name: 'llm_streaming_chunk_errors_total',
    help: 'Malformed or truncated upstream SSE events.',
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });
  private readonly requests = new CounterCells({
    name: 'llm_requests_total',
    help: 'Requests by the tier that answered ("none" when no tier did), outcome, and the protocol the client spoke.',
    labelNames: ['route', 'tier', 'outcome', 'protocol'],
    registers: [this.registry],
  });
  private readonly failovers = new CounterCells({
    name: 'llm_failovers_total',
    help: 'Moves from one tier to the next before commit, by the reason the tier failed.',
    labelNames: ['route', 'from_tier', 'reason'],
    registers: [this.registry],
  });
  private readonly attempts = new CounterCells({
    name: 'llm_upstream_attempts_total',
    help: 'Upstream attempts by result ("ok" or the failure reason).',
    labelNames: ['route', 'tier', 'result'],
    registers: [this.registry],
  });
  private readonly activeStreams = new GaugeCells({
    name: 'llm_active_streams',
    help: 'Committed streams being relayed now.',
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });
  private readonly tokens = new CounterCells({
    name: 'llm_tokens_total',
    help: 'Tokens as reported by upstream usage, or counted by llm-route where the upstream reported none.',
    labelNames: ['route', 'tier', 'kind'],
    registers: [this.registry],
  });
  private readonly cachedPrompt = new CounterCells({
    name: 'llm_cached_prompt_tokens_total',
    help: "Prompt tokens the tier's server read from its prompt (KV) cache, as it reported them; no series for a tier whose server reports none.",
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });

  private readonly resumes = new CounterCells({
    name: 'llm_stream_resumes_total',
    help: 'Committed streams that broke or stalled on a resume route, by how they were recovered, how it went (ok, diverged, failed) and why (stall_learned, idle, break).',
    labelNames: ['route', 'how', 'result', 'why'],
    registers: [this.registry],
  });

  private readonly hedges = new CounterCells({
    name: 'llm_hedges_total',
    help: 'Streams on a hedge_ms route whose next tier started as well, by which of the two committed (first_won, second_won).',
    labelNames: ['route', 'result'],
    registers: [this.registry],
  });

  private readonly truncations = new CounterCells({
    name: 'llm_prompt_truncated_total',
    help: 'Answers whose tier read under 70% of the prompt tokens sent: it cut the prompt silently.',
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });

  private readonly toolTexts = new CounterCells({
    name: 'llm_tool_text_total',
    help: 'Tool calls written as text, once per request and attempt: recovered, repaired, failed_over or passed_as_text.',
    labelNames: ['route', 'tier', 'format', 'result'],
    registers: [this.registry],
  });

  private readonly tierState = new GaugeCells({
    name: 'llm_tier_state',
    help: 'Tier health: 0 healthy, 1 degraded, 2 down (circuit open).',
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });
  private readonly tierWeight = new GaugeCells({
    name: 'llm_tier_weight',
    help: 'Effective tier weight (% of requests that try the tier), overrides included.',
    labelNames: ['route', 'tier'],
    registers: [this.registry],
  });
  private readonly rollbacks = new CounterCells({
    name: 'llm_rollbacks_total',
    help: 'Automated rollbacks (tier weight set to 0) by the threshold that tripped.',
    labelNames: ['route', 'tier', 'reason'],
    registers: [this.registry],
  });

  constructor(bus: TelemetryBus, config: Config) {
    this.configure(config);
    bus.subscribe(this.onEvent);
    bus.subscribe(saverMetrics(this.registry));
  }

  /**
   * Every configured tier gets its state and weight series from the start. A reload only adds
   * the new tiers: known ones keep the values their events set (a down tier stays down).
   */
  configure(config: Config): void {
    for (const tier of allTiers(config)) {
      if (this.has(this.tierState, tier.route, tier.name)) continue;
      this.child(this.tierState, tier.route, tier.name).set(0);
      this.child(this.tierWeight, tier.route, tier.name).set(tier.weight);
    }
  }

  async render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private readonly onEvent = (event: TelemetryEvent): void => {
    switch (event.type) {
      case 'commit':
        this.child(this.ttft, event.route, event.tier).observe(event.ttftMs / 1000);
        this.child(this.activeStreams, event.route, event.tier).inc();
        return;
      case 'chunk_error':
        this.child(this.chunkErrors, event.route, event.tier).inc();
        return;
      case 'attempt_end':
        this.child3(this.attempts, event.route, event.tier, event.record.outcome).inc();
        return;
      case 'failover':
        this.child3(this.failovers, event.route, event.fromTier, event.reason).inc();
        return;
      case 'request_end': {
        if (event.route === '') return; // rejected before a route was known
        const tier = event.tier ?? 'none';
        this.child4(this.requests, event.route, tier, event.outcome, event.protocol).inc();
        if (event.committed) this.child(this.activeStreams, event.route, tier).dec();
        if (event.resumed) this.child4(this.resumes, event.route, event.resumed.how, event.resumed.result, event.resumed.why).inc();
        if (event.usage) {
          this.child3(this.tokens, event.route, tier, 'prompt').inc(event.usage.prompt_tokens);
          this.child3(this.tokens, event.route, tier, 'completion').inc(event.usage.completion_tokens);
          // Counted even at 0: a series says the server reports its cache, so a hit rate of 0 is a miss, not silence.
          if (event.usage.cached_tokens !== undefined) this.child(this.cachedPrompt, event.route, tier).inc(event.usage.cached_tokens);
        }
        if (event.promptTruncated) this.child(this.truncations, event.route, tier).inc();
        for (const report of event.toolText ?? []) this.child4(this.toolTexts, event.route, report.tier, report.format, report.result).inc();
        if (event.hedged) this.child(this.hedges, event.route, event.hedged.result).inc();
        if (event.loserUsage) {
          const { tier: loser, usage } = event.loserUsage;
          this.child3(this.tokens, event.route, loser, 'prompt').inc(usage.prompt_tokens);
          this.child3(this.tokens, event.route, loser, 'completion').inc(usage.completion_tokens);
          if (usage.cached_tokens !== undefined) this.child(this.cachedPrompt, event.route, loser).inc(usage.cached_tokens);
        }
        return;
      }
      case 'prompt_truncated':
        this.child(this.truncations, event.route, event.tier).inc();
        return;
      case 'tier_state':
        this.child(this.tierState, event.route, event.tier).set(STATE_VALUE[event.to]);
        return;
      case 'weight':
        this.child(this.tierWeight, event.route, event.tier).set(event.weight);
        return;
      case 'rollback':
        this.child3(this.rollbacks, event.route, event.tier, event.reason).inc();
        return;
      default:
        return;
    }
  };

  /** The labelled child of a two-label metric, cached in nested maps: no label strings are built per event. */
  private child<T>(metric: Labelled<T>, a: string, b: string): T {
    const byB = nested(nested(this.children, metric), a);
    let child = byB.get(b) as T | undefined;
    if (child === undefined) byB.set(b, (child = metric.labels(a, b)));
    return child;
  }

  /** The same for a three-label metric. */
  private child3<T>(metric: Labelled<T>, a: string, b: string, c: string): T {
    const byC = nested(nested(nested(this.children, metric), a), b);
    let child = byC.get(c) as T | undefined;
    if (child === undefined) byC.set(c, (child = metric.labels(a, b, c)));
    return child;
  }

  private child4<T>(metric: Labelled<T>, a: string, b: string, c: string, d: string): T {
    const byD = nested(nested(nested(nested(this.children, metric), a), b), c);
    let child = byD.get(d) as T | undefined;
    if (child === undefined) byD.set(d, (child = metric.labels(a, b, c, d)));
    return child;
  }

  private has(metric: object, a: string, b: string): boolean {
    return nested(nested(this.children, metric), a).has(b);
  }
}

type Tree = Map<unknown, unknown>;

/** The map under `key`, made on first use. */
function nested(map: Tree, key: unknown): Tree {
  let inner = map.get(key) as Tree | undefined;
  if (inner === undefined) map.set(key, (inner = new Map()));
  return inner;
}
