import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { Dashboard } from '../../../src/ui/app.js';
import { DashboardState } from '../../../src/ui/dashboard-state.js';
import { requestEvents, testConfig } from './fixtures.js';
import { fakeActions, waitForFrame, type Rendered } from './render-helpers.js';

const AT = Date.UTC(2025, 2, 3, 12, 0, 0);

describe('shared state and limits in the dashboard', () => {
  it('Redis unreachable is a warning until it is back, and a log line each way', () => {
    const state = new DashboardState();
    state.apply({ type: 'state_degraded', backend: 'redis', target: '10.0.0.5:6379/0', error: 'connection closed' }, AT);
    expect(state.snapshot(testConfig(), AT).stateWarning).toBe(
      'shared state (Redis 10.0.0.5:6379/0) unreachable: serving on local state, limits and budgets per instance',
    );
    state.apply({ type: 'state_recovered', backend: 'redis', target: '10.0.0.5:6379/0', downMs: 2500 }, AT + 2500);
    const snapshot = state.snapshot(testConfig(), AT + 2500);
    expect(snapshot.stateWarning).toBeNull();
    expect(snapshot.log.map((l) => [l.level, l.text])).toEqual([
      ['bad', 'shared state (Redis 10.0.0.5:6379/0) unreachable: connection closed; serving on local state, limits and budgets per instance'],
      ['good', 'shared state (Redis 10.0.0.5:6379/0) back after 2.5s; rejoined'],
    ]);
  });

  it('a path no endpoint serves is a warning line naming the client, once per method and path', () => {
    const state = new DashboardState();
    const asked = { type: 'unknown_endpoint', method: 'POST', path: '/v1beta/files', userAgent: 'GeminiCLI/0.61.0', protocol: 'gemini' } as const;
    state.apply(asked, AT);
    state.apply(asked, AT + 1);
    state.apply({ ...asked, method: 'GET', userAgent: undefined }, AT + 2);
    expect(state.snapshot(testConfig(), AT + 2).log.map((l) => [l.level, l.text])).toEqual([
      ['warn', 'POST /v1beta/files from GeminiCLI/0.61.0: no such endpoint, answered 404'],
      ['warn', 'GET /v1beta/files: no such endpoint, answered 404'],
    ]);
  });

  it('the start-up notice of a tier that cannot answer is a warning line of the log', () => {
    const state = new DashboardState();
    state.apply(
      {
        type: 'tier_unavailable',
        route: 'chat',
        tier: 'local',
        problem: 'unreachable',
        detail: 'connection refused (127.0.0.1:11434)',
        fallback: 'chat/cloud',
        paid: true,
      },
      AT,
    );
    expect(state.snapshot(testConfig(), AT).log.map((l) => [l.level, l.text])).toEqual([
      ['warn', 'chat/local is unreachable (connection refused (127.0.0.1:11434)); its requests go to chat/cloud, a paid tier'],
    ]);
  });

  it('a tier skipped for a limit or a budget is neither a request nor an error of it; one log line per tier every 10 s', () => {
    const state = new DashboardState();
    const skip = { tier: 'cloud', attempt: 1, outcome: 'rate_limited' as const, ms: 1000, message: 'provider openai at its rpm limit' };
    for (let i = 0; i < 3; i++) for (const event of requestEvents('chat', [skip])) state.apply(event, AT + i * 1000);
    for (const event of requestEvents('chat', [
      { tier: 'cloud', attempt: 1, outcome: 'budget', ms: 0, message: 'budget provider:openai per day exhausted (0 tokens left)' },
    ]))
      state.apply(event, AT + 11_000);
    // An upstream's own 429 is the tier's error, as before.
    for (const event of requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'rate_limited', status: 429, ms: 40 }])) state.apply(event, AT + 12_000);
    const snapshot = state.snapshot(testConfig(), AT + 12_000);
    const cloud = snapshot.routes[0].tiers[1];
    expect(cloud).toMatchObject({ requests: 1, errors: 1 });
    expect(snapshot.log.map((l) => l.text)).toEqual([
      'chat/cloud skipped, rate limited: provider openai at its rpm limit',
      'chat/cloud skipped, budget: budget provider:openai per day exhausted (0 tokens left) (+2 more since the last line)',
    ]);
  });
});

describe('the header', () => {
  let ui: Rendered | null = null;
  afterEach(() => ui?.unmount());

  it('says when the shared state is unreachable', async () => {
    const bus = new TelemetryBus();
    const config = testConfig();
    ui = render(<Dashboard bus={bus} config={() => config} listen="http://127.0.0.1:4141" startedAt={Date.now()} actions={fakeActions()} />);
    bus.emit({ type: 'state_degraded', backend: 'redis', target: '127.0.0.1:6390/0', error: 'connect ECONNREFUSED' });
    await waitForFrame(ui, (f) => expect(f).toContain('shared state (Redis 127.0.0.1:6390/0) unreachable'));
  });
});
