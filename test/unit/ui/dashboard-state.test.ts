import { describe, expect, it } from 'vitest';
import type { TelemetryEvent, WeightChanged } from '../../../src/telemetry/events.js';
import { heldCallsLine } from '../../../src/ui/components/header.js';
import { DashboardState, type TierView } from '../../../src/ui/dashboard-state.js';
import { RateMeter } from '../../../src/ui/model/rate-meter.js';
import { SampleWindow } from '../../../src/ui/model/sample-window.js';
import { sparkline } from '../../../src/ui/sparkline.js';
import { WeightControl } from '../../../src/control/weights.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { ManualClock } from '../../helpers/clock.js';
import { recordLoaded, resetLoadedModels } from '../../../src/health/loaded-models.js';
import { providerModel } from '../../../src/ui/layout/tier-cells.js';
import { attempt, requestEvents, testConfig } from './fixtures.js';

const T0 = 1_700_000_000_000;
const config = testConfig();

function stateWith(events: TelemetryEvent[], at = T0): DashboardState {
  const state = new DashboardState();
  for (const event of events) state.apply(event, at);
  return state;
}

function tierOf(state: DashboardState, route: string, tier: string, now = T0): TierView {
  const view = state
    .snapshot(config, now)
    .routes.find((r) => r.name === route)
    ?.tiers.find((t) => t.name === tier);
  if (!view) throw new Error(`no ${route}/${tier}`);
  return view;
}

describe('request path text', () => {
  it('fills the recent list, newest first, with the protocol, status, TTFT and tokens', () => {
    const state = stateWith([
      ...requestEvents('chat', [attempt('local', 'ok', { ms: 200 })], { ttftMs: 210 }),
      ...requestEvents('chat', [attempt('local', 'ttft_timeout', { ms: 2500 }), attempt('cloud', 'ok')], { ttftMs: 2700 }),
      {
        type: 'request_end',
        id: 'x',
        route: '',
        tier: null,
        status: 404,
        outcome: 'bad_request',
        stream: false,
        committed: false,
        attempts: [],
        durationMs: 1,
        startedAt: T0,
        protocol: 'messages',
        provider: null,
        model: null,
        chunkErrors: 0,
        error: 'unknown route "gpt-5"',
      },
    ]);
    const recent = state.snapshot(config, T0).recent;
    expect(recent.map((r) => r.path)).toEqual(['unknown route "gpt-5"', 'local ✗ ttft 2.5s → cloud ✓', 'local ✓']);
    expect(recent.map((r) => r.protocol)).toEqual(['messages', 'chat', 'chat']);
    expect(recent[1]).toMatchObject({ route: 'chat', status: 200, ttftMs: 2700, completionTokens: 143, outcome: 'ok' });
  });

  it('marks a resumed stream in the recent list with what ended it, and a resume that failed', () => {
    const recent = stateWith([
      ...requestEvents('chat', [attempt('local', 'ok'), attempt('cloud', 'ok')], {
        resumed: { from: 'local', to: 'cloud', how: 'continue', why: 'stall_learned', at_chars: 120, result: 'ok' },
      }),
      ...requestEvents('chat', [attempt('local', 'ok'), attempt('cloud', 'ok')], {
        resumed: { from: 'local', to: 'cloud', how: 'continue', why: 'idle', at_chars: 12, result: 'ok' },
      }),
      ...requestEvents('chat', [attempt('local', 'ok'), attempt('cloud', 'replay_diverged')], {
        outcome: 'interrupted',
        resumed: { from: 'local', to: 'cloud', how: 'replay', why: 'break', at_chars: 40, result: 'diverged' },
      }),
      ...requestEvents('chat', [attempt('local', 'ok')]),
    ]).snapshot(config, T0).recent;
    expect(recent.map((r) => r.resumed)).toEqual([
      undefined,
      'resume diverged after a break',
      'resumed local→cloud by continue after idle_ms',
      'resumed local→cloud by continue after a learned stall',
    ]);
  });

  it('marks a tool call written as text in the recent list: recovered, or failed over to the next tier', () => {
    const recent = stateWith([
      ...requestEvents('chat', [attempt('local', 'ok')], { toolText: [{ tier: 'local', format: 'hermes', calls: 1, repaired: false, result: 'recovered' }] }),
      ...requestEvents('chat', [attempt('local', 'bad_tool_call'), attempt('cloud', 'ok')], {
        toolText: [{ tier: 'local', format: 'qwen3_xml', calls: 0, repaired: false, result: 'failed_over' }],
      }),
      ...requestEvents('chat', [attempt('local', 'ok')]),
    ]).snapshot(config, T0).recent;
    expect(recent.map((r) => r.toolText)).toEqual([undefined, 'tool text qwen3_xml failed over', 'tool text hermes recovered']);
    expect(recent[1].path).toBe('local ✗ bad tool call → cloud ✓');
  });

  it('marks an embeddings request in the recent list: its inputs, width, tokens and inputs cut; it has no answer tokens', () => {
    const recent = stateWith([
      ...requestEvents('embed', [attempt('local', 'ok')], {
        embeddings: { inputs: 1000, width: 768, cut: 2 },
        usage: { prompt_tokens: 12_345, completion_tokens: 0 },
      }),
      ...requestEvents('embed', [attempt('local', 'connection_refused')], { tier: null, status: 503, outcome: 'failed', embeddings: { inputs: 1 } }),
    ]).snapshot(config, T0).recent;
    expect(recent.map((r) => r.embeddings)).toEqual(['embeddings 1 input', 'embeddings 1000 inputs 768-d 12.3k tokens 2 cut to fit']);
    expect(recent[1].completionTokens).toBeUndefined();
  });

  it('shows a tool call written as text while it is held: how far it grew, since when, how long it has been quiet; gone when it ends', () => {
    const hold = (id: string, tier: string, chars: number, ms: number): TelemetryEvent => ({ type: 'tool_text_hold', id, route: 'chat', tier, chars, ms });
    const state = new DashboardState();
    state.apply({ type: 'request_start', id: 'r1', route: 'chat', stream: true, protocol: 'messages' }, T0);
    state.apply(hold('r1', 'local', 120, 0), T0 + 400);
    state.apply(hold('r1', 'local', 9_800, 41_000), T0 + 41_400);
    expect(state.snapshot(config, T0 + 43_400).heldCalls).toEqual([{ route: 'chat', tier: 'local', chars: 9_800, heldMs: 43_000, quietMs: 2_000 }]);
    expect(heldCallsLine(state.snapshot(config, T0 + 43_400).heldCalls)).toBe('holding a tool call written as text: chat/local 9800 chars, 43s (quiet 2.0s)');
    // It ends: told so, or its attempt fails over, or the request commits or ends.
    state.apply(hold('r1', 'local', 0, 0), T0 + 44_000);
    expect(state.snapshot(config, T0 + 44_000).heldCalls).toEqual([]);
    state.apply(hold('r2', 'local', 50, 0), T0);
    state.apply(
      {
        type: 'attempt_end',
        id: 'r2',
        route: 'chat',
        tier: 'local',
        provider: 'p',
        record: attempt('local', 'bad_tool_call'),
        stream: true,
        blame: 'tier',
        model: 'm',
        startMs: 0,
        endMs: 400,
      },
      T0,
    );
    state.apply(hold('r3', 'local', 50, 0), T0);
    state.apply({ type: 'commit', id: 'r3', route: 'chat', tier: 'local', ttftMs: 900 }, T0);
    expect(state.snapshot(config, T0).heldCalls).toEqual([]);
  });

  it('marks a hedged stream in the recent list with who won', () => {
    const recent = stateWith([
      ...requestEvents('chat', [attempt('local', 'hedge_lost'), attempt('cloud', 'ok')], {
        hedged: { at_ms: 800, winner: 'cloud', loser: 'local', result: 'second_won' },
      }),
      ...requestEvents('chat', [attempt('local', 'ok')]),
    ]).snapshot(config, T0).recent;
    expect(recent.map((r) => r.hedged)).toEqual([undefined, 'hedged at 800 ms: cloud won, local stopped']);
  });

  it("shows what each tier's server says of its model: loaded, cold, or nothing", () => {
    const state = stateWith([]);
    const [first, second] = config.routes.get('chat')!.tiers;
    recordLoaded(first, true);
    recordLoaded(second, false);
    try {
      expect(tierOf(state, 'chat', first.name).loaded).toBe(true);
      expect(providerModel(tierOf(state, 'chat', second.name))).toBe(`${second.provider.name}/${second.model} (cold)`);
      recordLoaded(second, undefined);
      expect(tierOf(state, 'chat', second.name)).not.toHaveProperty('loaded');
    } finally {
      resetLoadedModels();
    }
  });

  it('keeps the last 50 finished requests', () => {
    const events: TelemetryEvent[] = [];
    for (let i = 0; i < 60; i++) events.push(...requestEvents('chat', [attempt('local', 'ok', { ms: i })], { ttftMs: i }));
    const recent = stateWith(events).snapshot(config, T0).recent;
    expect(recent).toHaveLength(50);
    expect(recent[0].ttftMs).toBe(59);
    expect(recent[49].ttftMs).toBe(10);
  });
});

describe('TTFT percentiles', () => {
  it('counts the last 60 s, at most 200 samples', () => {
    const window = new SampleWindow(200, 60_000);
    window.record(50_000, T0 - 61_000); // too old
    for (let i = 1; i <= 100; i++) window.record(i * 10, T0 - 1000);
    expect(window.percentiles(T0)).toEqual({ p50: 500, p95: 950, p99: 990, count: 100 });
    for (let i = 0; i < 250; i++) window.record(7, T0);
    expect(window.percentiles(T0)).toEqual({ p50: 7, p95: 7, p99: 7, count: 200 });
    expect(window.percentiles(T0 + 61_000)).toBeNull();
  });

  it("are each tier's own TTFT (its ok streaming attempts), with a history for the sparkline; the client-seen one is the header's", () => {
    const events: TelemetryEvent[] = [];
    for (const ms of [100, 200, 300, 400]) events.push(...requestEvents('chat', [attempt('local', 'ok', { ms })], { ttftMs: ms + 5 }));
    events.push(...requestEvents('chat', [attempt('local', 'ttft_timeout', { ms: 2500 }), attempt('cloud', 'ok', { ms: 380 })], { ttftMs: 2890 }));
    const state = stateWith(events);
    expect(tierOf(state, 'chat', 'local').ttft).toEqual({ p50: 200, p95: 400, p99: 400, count: 4 });
    expect(tierOf(state, 'chat', 'local').ttftHistory).toEqual([100, 200, 300, 400]);
    // The cloud's own 380 ms, not the 2.9 s the client waited (2.5 s of it on the failed local attempt).
    expect(tierOf(state, 'chat', 'cloud').ttft).toEqual({ p50: 380, p95: 380, p99: 380, count: 1 });
    expect(state.snapshot(config, T0).clientTtft).toEqual({ p50: 305, p95: 2890, p99: 2890, count: 5 });
    expect(tierOf(state, 'embed', 'main').ttft).toBeNull();
    expect(sparkline([100, 200, 300, 400])).toBe('▃▅▆█');
    expect(sparkline([0, 0])).toBe('▁▁');
  });
});

describe('requests per second', () => {
  it('averages arrivals over the last 10 s', () => {
    const meter = new RateMeter(10);
    for (let i = 0; i < 20; i++) meter.mark(T0 + i * 250); // 20 in 5 s
    expect(meter.perSecond(T0 + 5000)).toBe(2);
    expect(meter.perSecond(T0 + 12_000)).toBeCloseTo(0.8); // only the last 8 within the window
    expect(meter.perSecond(T0 + 30_000)).toBe(0);
  });

  it('comes from request_start events', () => {
    const state = new DashboardState();
    for (let i = 0; i < 25; i++) state.apply({ type: 'request_start', id: `q${i}`, route: 'chat', stream: true, protocol: 'chat' }, T0 + i * 100);
    const snapshot = state.snapshot(config, T0 + 2500);
    expect(snapshot.requestsPerSecond).toBe(2.5);
    expect(snapshot.pending).toBe(25);
    expect(snapshot.routes[0].pending).toBe(25);
  });
});

describe('tier counters', () => {
  it('counts requests, errors and failovers per tier; payload rejections are not the tier errors', () => {
    const state = stateWith([
      ...requestEvents('chat', [
        attempt('local', 'server_error', { status: 503 }),
        attempt('local', 'server_error', { attempt: 2, status: 503 }),
        attempt('cloud', 'ok'),
      ]),
      ...requestEvents('chat', [attempt('local', 'ok')]),
      {
        type: 'attempt_end',
        id: 'p',
        route: 'chat',
        tier: 'cloud',
        provider: 'openai',
        stream: true,
        record: attempt('cloud', 'client_error', { status: 400 }),
        blame: 'payload',
        model: 'm',
        startMs: 0,
        endMs: 400,
      },
    ]);
    expect(tierOf(state, 'chat', 'local')).toMatchObject({ requests: 2, errors: 2, failovers: 1, live: 0 });
    expect(tierOf(state, 'chat', 'cloud')).toMatchObject({ requests: 2, errors: 0, failovers: 0 });
  });

  it('a payload the tier cannot carry (unsupported input, context length) is a failover, not a tier error', () => {
    const state = stateWith([
      ...requestEvents('chat', [attempt('local', 'unsupported', { status: 500 }), attempt('cloud', 'ok')]),
      ...requestEvents('chat', [attempt('local', 'context_length', { status: 400 }), attempt('cloud', 'ok')]),
    ]);
    expect(tierOf(state, 'chat', 'local')).toMatchObject({ requests: 2, errors: 0, failovers: 2 });
  });

  it('counts a committed stream live until it ends, and an interrupted one as an error', () => {
    const events = requestEvents('chat', [attempt('cloud', 'ok')], { outcome: 'interrupted' });
    const end = events.pop() as TelemetryEvent;
    const state = stateWith(events);
    expect(tierOf(state, 'chat', 'cloud').live).toBe(1);
    expect(state.snapshot(config, T0)).toMatchObject({ activeStreams: 1, pending: 0 });
    state.apply(end, T0);
    expect(tierOf(state, 'chat', 'cloud')).toMatchObject({ live: 0, errors: 1 });
    expect(state.snapshot(config, T0)).toMatchObject({ activeStreams: 0, pending: 0 });
  });

  it('takes state from tier_state events', () => {
    const state = stateWith([{ type: 'tier_state', route: 'chat', tier: 'local', from: 'healthy', to: 'degraded', reason: 'slow: p50 2.1s' }]);
    expect(tierOf(state, 'chat', 'local')).toMatchObject({ health: 'degraded', healthReason: 'slow: p50 2.1s' });
    expect(tierOf(state, 'chat', 'cloud').health).toBe('healthy');
  });
});

describe('weights', () => {
  const none = { admin: null, alerts: [], rollback: null };
  const weight = (tier: string, w: number, configured: number, source: WeightChanged['source'], reason?: string): WeightChanged => ({
    type: 'weight',
    route: 'embed',
    tier,
    weight: w,
    configured,
    source,
    ...(reason ? { reason } : {}),
    layers: none,
  });

  /** The dashboard fed by a real WeightControl on the same config, its TTLs on `clock`. */
  function withWeights(clock = new ManualClock()): { state: DashboardState; weights: WeightControl; clock: ManualClock } {
    const state = new DashboardState();
    const bus = new TelemetryBus();
    bus.subscribe((event) => state.apply(event, clock.now()));
    return { state, weights: new WeightControl(bus, config, clock), clock };
  }

  it('shows the configured weight until an event says otherwise, labelled by what holds it', () => {
    const { state, weights, clock } = withWeights();
    const canary = (): string => tierOf(state, 'embed', 'canary', clock.now()).weightText;
    expect(canary()).toBe('25');
    weights.setOverride('embed', 'canary', 0);
    expect(tierOf(state, 'embed', 'canary')).toMatchObject({ weight: 0, weightText: '0 (killed)' });
    expect(state.effectiveWeight('embed', 'canary', 25)).toBe(0);
    weights.clear('embed', 'canary');
    expect(tierOf(state, 'embed', 'canary')).toMatchObject({ weight: 25, weightText: '25' });
    expect(state.effectiveWeight('embed', 'canary', 25)).toBe(25);
    weights.setOverride('embed', 'canary', 10);
    expect(canary()).toBe('10 (admin)');
    weights.rollBack('embed', 'canary', 'TTFT p99 3200 ms > 2500 ms over 40 requests in 60 s', 60);
    expect(canary()).toBe('0 (rolled back)');
    clock.advance(60_000); // restore_after_s
    expect(canary()).toBe('10 (admin)');
    weights.fireAlert('embed', 'canary', 'a1', 'HighErrors');
    weights.fireAlert('embed', 'canary', 'a2', 'SlowTTFT');
    expect(canary()).toBe('0 (alert)');
    weights.resolveAlert('embed', 'canary', 'a1');
    expect(canary()).toBe('0 (alert)'); // SlowTTFT still fires
    weights.resolveAlert('embed', 'canary', 'a2');
    expect(canary()).toBe('10 (admin)');
    weights.clear('embed', 'canary');
    expect(canary()).toBe('25');
  });

  it('shows the time an admin override has left, and drops it when it lapses', () => {
    const { state, weights, clock } = withWeights();
    const T = clock.now();
    weights.setOverride('embed', 'canary', 5, 150);
    expect(tierOf(state, 'embed', 'canary', T).weightText).toBe('5 (admin, 3m left)');
    expect(tierOf(state, 'embed', 'canary', T + 120_000).weightText).toBe('5 (admin, 30s left)');
    weights.setOverride('embed', 'main', 0, 600);
    expect(tierOf(state, 'embed', 'main', T).weightText).toBe('0 (killed, 10m left)');
    clock.advance(150_000);
    expect(tierOf(state, 'embed', 'canary', clock.now()).weightText).toBe('25');
    expect(tierOf(state, 'embed', 'main', clock.now()).weightText).toBe('0 (killed, 8m left)');
  });

  it('labels from the layers an event carries, whatever its words say', () => {
    const state = stateWith([{ ...weight('canary', 0, 25, 'alert', 'alert X resolved'), layers: { ...none, alerts: ['Y'] } }]);
    expect(tierOf(state, 'embed', 'canary').weightText).toBe('0 (alert)');
    state.apply({ ...weight('canary', 7, 25, 'expired', 'rollback restored'), layers: { ...none, admin: { weight: 7, expiresAt: T0 + 30_000 } } }, T0);
    expect(tierOf(state, 'embed', 'canary').weightText).toBe('7 (admin, 30s left)');
  });

  it('logs a change once: a rollback with its numbers, a reload only where a weight moved', () => {
    const state = stateWith([
      { type: 'rollback', route: 'embed', tier: 'canary', reason: 'ttft_p99', observed: 3200, threshold: 2500, requests: 40, windowS: 60 },
      weight('canary', 0, 25, 'rollback', 'TTFT p99 3200 ms > 2500 ms over 40 requests in 60 s'),
      weight('canary', 25, 25, 'reload'),
      weight('main', 100, 100, 'reload'),
      weight('main', 50, 50, 'reload'),
    ]);
    expect(state.snapshot(config, T0).log.map((l) => l.text)).toEqual([
      'rollback embed/canary: ttft p99 3.2s > 2.5s over 60s (40 requests), weight → 0',
      'embed/canary weight 0 → 25 (tier file)',
      'embed/main weight 100 → 50 (tier file)',
    ]);
  });
});

describe('log', () => {
  it('notes reloads, rollbacks, weight changes, probes and provider output; not routine checks', () => {
    const state = stateWith([
      { type: 'reload', ok: true, file: '/t/llm-route.yaml', routes: 2 },
      { type: 'reload', ok: false, file: '/t/llm-route.yaml', problems: ['/t/llm-route.yaml:9:7: expected a number'] },
      { type: 'rollback', route: 'embed', tier: 'canary', reason: 'error_rate', observed: 0.12, threshold: 0.05, requests: 40, windowS: 60 },
      {
        type: 'weight',
        route: 'embed',
        tier: 'canary',
        weight: 0,
        configured: 25,
        source: 'rollback',
        reason: 'error rate 12.0% > 5.0% over 40 requests in 60 s',
        layers: { admin: null, alerts: [], rollback: 'error rate 12.0% > 5.0% over 40 requests in 60 s' },
      },
      {
        type: 'weight',
        route: 'chat',
        tier: 'local',
        weight: 0,
        configured: 100,
        source: 'admin',
        layers: { admin: { weight: 0, expiresAt: null }, alerts: [], rollback: null },
      },
      { type: 'health_check', route: 'chat', tier: 'local', kind: 'check', ok: true, reachable: true, modelPresent: true, ttftMs: 90 },
      { type: 'health_check', route: 'chat', tier: 'local', kind: 'probe', ok: false, reachable: true, modelPresent: false, ttftMs: null },
      { type: 'provider_output', provider: 'ollama', stream: 'stderr', line: 'listening on 127.0.0.1:11434' },
    ]);
    expect(state.snapshot(config, T0).log.map((l) => `${l.level} ${l.text}`)).toEqual([
      'good reloaded /t/llm-route.yaml: 2 routes',
      'bad reload rejected, still running the previous config (1 problem)',
      'bad   /t/llm-route.yaml:9:7: expected a number',
      'bad rollback embed/canary: error rate 12.0% > 5.0% over 60s (40 requests), weight → 0',
      'warn chat/local weight 100 → 0 (killed)',
      'bad probe chat/local failed: model not present',
      'info [ollama] listening on 127.0.0.1:11434',
    ]);
  });
});

describe('log: quiet where it should be', () => {
  it('shows a warm-up the first time and when it fails, not every keep-alive', () => {
    const warmup = (ok: boolean): TelemetryEvent => ({
      type: 'health_check',
      route: 'chat',
      tier: 'local',
      kind: 'warmup',
      ok,
      reachable: true,
      modelPresent: true,
      ttftMs: ok ? 3400 : null,
      ...(ok ? {} : { error: 'HTTP 500' }),
    });
    const state = stateWith([warmup(true), warmup(true), warmup(false), warmup(true)]);
    expect(state.snapshot(config, T0).log.map((l) => l.text)).toEqual(['warmup chat/local ok, ttft 3.4s', 'warmup chat/local failed: HTTP 500']);
  });

  it('a warm-up of a loading server says so and how long it waited, then ok after the wait', () => {
    const base = { type: 'health_check', route: 'chat', tier: 'local', kind: 'warmup', reachable: true, modelPresent: null } as const;
    const state = stateWith([
      { ...base, ok: false, ttftMs: null, loading: true, waitedMs: 0, error: 'still loading (HTTP 503: Loading model)' },
      { ...base, ok: false, ttftMs: null, loading: true, waitedMs: 5_100, error: 'still loading (HTTP 503: Loading model)' },
      { ...base, ok: true, modelPresent: false, ttftMs: 80, waitedMs: 7_400, note: 'serves any model name' },
    ]);
    expect(state.snapshot(config, T0).log.map((l) => `${l.level} ${l.text}`)).toEqual([
      'warn warmup chat/local: still loading (HTTP 503: Loading model)',
      'warn warmup chat/local: still loading (HTTP 503: Loading model), waited 5.1s so far',
      'good warmup chat/local ok, ttft 80ms after 7.4s of loading (serves any model name)',
    ]);
  });

  it('lists the first problems of a rejected reload and counts the rest', () => {
    const problems = Array.from({ length: 8 }, (_, i) => `/t/llm-route.yaml:${i + 1}:1: bad`);
    const lines = stateWith([{ type: 'reload', ok: false, file: '/t/llm-route.yaml', problems }])
      .snapshot(config, T0)
      .log.map((l) => l.text);
    expect(lines).toHaveLength(7);
    expect(lines[0]).toBe('reload rejected, still running the previous config (8 problems)');
    expect(lines[5]).toBe('  /t/llm-route.yaml:5:1: bad');
    expect(lines[6]).toBe('  … 3 more: run llm-route validate -c /t/llm-route.yaml');
  });
});

describe("a tier's prompt-cache hit rate", () => {
  const answered = (tier: string, usage?: Record<string, number>) =>
    requestEvents('chat', [attempt(tier, 'ok')], usage ? { usage: usage as { prompt_tokens: number; completion_tokens: number } } : {});

  it('is the share of prompt tokens its server read from its cache, over the answers that said; none said: null', () => {
    const state = stateWith([
      ...answered('local', { prompt_tokens: 2900, completion_tokens: 10, cached_tokens: 0 }),
      ...answered('local', { prompt_tokens: 3000, completion_tokens: 10, cached_tokens: 2900 }),
      ...answered('local', { prompt_tokens: 1000, completion_tokens: 10 }), // this server said nothing of its cache
      ...answered('cloud', { prompt_tokens: 500, completion_tokens: 10 }),
      ...answered('cloud'),
    ]);
    expect(tierOf(state, 'chat', 'local').cacheHitRate).toBeCloseTo(2900 / 5900, 6);
    expect(tierOf(state, 'chat', 'cloud').cacheHitRate).toBeNull();
  });

  it('counts only the last 20 such answers: a session that starts missing shows at once', () => {
    const events = [];
    for (let i = 0; i < 30; i++) events.push(...answered('local', { prompt_tokens: 1000, completion_tokens: 1, cached_tokens: 990 }));
    for (let i = 0; i < 20; i++) events.push(...answered('local', { prompt_tokens: 1000, completion_tokens: 1, cached_tokens: 10 }));
    expect(tierOf(stateWith(events), 'chat', 'local').cacheHitRate).toBeCloseTo(0.01, 6);
  });
});
