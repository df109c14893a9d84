import { describe, expect, it } from 'vitest';
import { type Config, ServerSchema } from '../../../src/config/schema.js';
import { HealthBoard } from '../../../src/health/health-board.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { AttemptFinished, AttemptOutcome, HealthChecked, TelemetryEvent, TierStateChanged } from '../../../src/telemetry/events.js';
import { route, tier } from '../../helpers/config.js';

/** A board over one route `chat` with a tier `local`, on a clock the test moves. */
function board(circuit: Partial<ReturnType<typeof tier>['circuit']> = {}) {
  const local = tier('local', { circuit: { failures: 3, cooldown_ms: 1000, max_cooldown_ms: 8000, slow_ttft_ms: 2000, ...circuit } });
  const chat = route([local]);
  const config: Config = {
    file: '/t.yaml',
    server: ServerSchema.parse({ port: 0, max_body_bytes: 1024 }),
    providers: new Map([[local.provider.name, local.provider]]),
    routes: new Map([['chat', chat]]),
    warnings: [],
    usage: { path: null, retention_days: 90, enabled: false },
    budgets: [],
    idempotency: { ttl_s: 86_400, wait_ms: 120_000 },
    state: { prefix: 'llm-route:' },
    telemetry: {},
  };
  const bus = new TelemetryBus();
  const states: TierStateChanged[] = [];
  bus.subscribe((event: TelemetryEvent) => {
    if (event.type === 'tier_state') states.push(event);
  });
  const clock = { now: 10_000 };
  const health = new HealthBoard(bus, config, () => clock.now);
  const t = chat.tiers[0];
  const attempt = (outcome: AttemptOutcome, blame: AttemptFinished['blame'], fields: { ms?: number; status?: number } = {}): void => {
    bus.emit({
      type: 'attempt_end',
      id: 'r',
      route: 'chat',
      tier: 'local',
      provider: t.provider.name,
      stream: true,
      blame,
      record: { tier: 'local', attempt: 1, outcome, ms: fields.ms ?? 50, ...(fields.status ? { status: fields.status } : {}) },
      model: t.model,
      startMs: 0,
      endMs: fields.ms ?? 50,
    });
  };
  return { health, bus, t, clock, states, attempt, view: () => health.view('chat', 'local') };
}

describe('HealthBoard: answers that say nothing about health', () => {
  it('`unsupported` and `context_length` attempts leave the tier healthy, however many', () => {
    const b = board();
    for (let i = 0; i < 6; i++) b.attempt(i % 2 === 0 ? 'unsupported' : 'context_length', 'tier', { status: i % 2 === 0 ? 500 : 400 });
    expect(b.states).toEqual([]);
    expect(b.view()).toMatchObject({ state: 'healthy', consecutive_failures: 0, attempts: 0, failures: 0 });
    expect(b.health.allows(b.t)).toBe(true);
  });

  it('a real failure still counts (the control case)', () => {
    const b = board();
    for (let i = 0; i < 3; i++) b.attempt('server_error', 'tier', { status: 500 });
    expect(b.view()).toMatchObject({ state: 'down', consecutive_failures: 3 });
  });
});

describe('HealthBoard: a half-open tier that answers is alive', () => {
  const openThenTrial = () => {
    const b = board();
    for (let i = 0; i < 3; i++) b.attempt('server_error', 'tier', { status: 503 });
    expect(b.view()?.state).toBe('down');
    b.clock.now += 1000; // the cooldown is over
    expect(b.health.claim(b.t)).toBe(true); // the trial
    expect(b.health.claim(b.t)).toBe(false);
    return b;
  };

  it.each([
    ['a payload error (blame payload)', 'bad_request' as const, 'payload' as const, 400],
    ['a context-length rejection', 'context_length' as const, 'tier' as const, 400],
    ['an unsupported input', 'unsupported' as const, 'tier' as const, 500],
  ])('%s closes the circuit instead of spending the trial', (_name, outcome, blame, status) => {
    const b = openThenTrial();
    b.attempt(outcome, blame, { status });
    expect(b.view()).toMatchObject({ state: 'healthy', consecutive_failures: 0, retry_at: null });
    expect(b.states.at(-1)).toMatchObject({ from: 'down', to: 'healthy', reason: `it answered the half-open trial (${outcome} ${status})` });
    expect(b.health.claim(b.t)).toBe(true);
    expect(b.health.claim(b.t)).toBe(true); // closed: everyone passes
  });

  it('a failed trial still re-opens it', () => {
    const b = openThenTrial();
    b.attempt('connection_reset', 'tier');
    expect(b.view()?.state).toBe('down');
    expect(b.health.allows(b.t)).toBe(false);
  });

  it('a payload error while the circuit is closed changes nothing', () => {
    const b = board();
    b.attempt('server_error', 'tier', { status: 500 });
    b.attempt('bad_request', 'payload', { status: 400 });
    expect(b.view()).toMatchObject({ state: 'degraded', consecutive_failures: 1 });
  });
});

describe('HealthBoard: active checks', () => {
  const check = (b: ReturnType<typeof board>, fields: Partial<HealthChecked>): void => {
    b.bus.emit({
      type: 'health_check',
      route: 'chat',
      tier: 'local',
      kind: 'check',
      ok: false,
      reachable: true,
      modelPresent: true,
      ttftMs: null,
      ...fields,
    } as HealthChecked);
  };

  it('a passing check with a token ends the degraded state a failed one started', () => {
    const b = board();
    check(b, { error: 'no answer within 2000 ms' });
    expect(b.view()?.state).toBe('degraded');
    check(b, { kind: 'warmup', ok: true, ttftMs: 3700 });
    expect(b.view()).toMatchObject({ state: 'healthy', consecutive_failures: 0 });
    expect(b.states.map((s) => `${s.to}: ${s.reason}`)).toEqual([
      'degraded: failing: check: no answer within 2000 ms (1 in a row)',
      'healthy: warmup succeeded',
    ]);
  });

  it('a check that finds the server loading changes nothing', () => {
    const b = board();
    for (let i = 0; i < 5; i++) check(b, { loading: true, error: 'still loading (HTTP 503: Loading model)' });
    expect(b.states).toEqual([]);
    expect(b.view()).toMatchObject({ state: 'healthy', consecutive_failures: 0, last_error: null });
  });
});

describe('HealthBoard: tier_state reasons say what did it', () => {
  it('slow: the TTFT median against slow_ttft_ms', () => {
    const b = board({ slow_ttft_ms: 2000 });
    for (let i = 0; i < 5; i++) {
      b.clock.now += 600; // past the verdict's 500 ms cache
      b.attempt('ok', null, { ms: 2100 });
    }
    expect(b.states).toEqual([expect.objectContaining({ from: 'healthy', to: 'degraded', reason: 'slow: ttft p50 2.1 s > 2.0 s' })]);
  });

  it('errors: the share of failures in the window', () => {
    const b = board({ failures: 10 });
    // All at one instant, so the window verdict (cached for 500 ms) stays "healthy": each failure
    // degrades the tier, the next success restores it.
    for (let i = 0; i < 8; i++) b.attempt('ok', null);
    for (let i = 0; i < 5; i++) {
      b.attempt('server_error', 'tier', { status: 500 });
      b.attempt('ok', null);
    }
    expect(b.states.slice(0, 2).map((s) => `${s.from}->${s.to}: ${s.reason}`)).toEqual([
      'healthy->degraded: failing: server_error (1 in a row)',
      'degraded->healthy: a request succeeded',
    ]);
    // Later, one more success: 5 failures of 19 in the window is over the 25% line.
    b.clock.now += 600;
    b.attempt('ok', null);
    expect(b.states.at(-1)).toMatchObject({ from: 'healthy', to: 'degraded', reason: 'errors: 26% of 19 in 60 s' });
    expect(b.states.filter((s) => s.reason === 'ok')).toEqual([]);
  });

  it('down: the failures in a row and the last one', () => {
    const b = board();
    b.attempt('ttft_timeout', 'tier');
    b.attempt('ttft_timeout', 'tier');
    b.attempt('connection_refused', 'tier');
    expect(b.states.map((s) => `${s.to}: ${s.reason}`)).toEqual([
      'degraded: failing: ttft_timeout (1 in a row)',
      'down: circuit open after 3 failures in a row (last: connection_refused)',
    ]);
  });
});
