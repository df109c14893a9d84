import { render as inkRender } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/schema.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import type { TelemetryEvent } from '../../../src/telemetry/events.js';
import { Dashboard } from '../../../src/ui/app.js';
import { NO_LAYERS } from '../../../src/ui/model/weight-layers.js';
import { requestEvents, testConfig } from './fixtures.js';
import {
  FakeStdout,
  PipeStdin,
  fakeActions,
  frameText,
  resizeTo,
  rowOf,
  sleep,
  until,
  waitForFrame,
  type FakeActions,
  type Rendered,
} from './render-helpers.js';

const LISTEN = 'http://127.0.0.1:4141';
const DOWN = '\u001B[B';
const UP = '\u001B[A';

interface Screen {
  bus: TelemetryBus;
  actions: FakeActions;
  ui: Rendered;
  emit: (...events: TelemetryEvent[]) => void;
}

let mounted: Rendered[] = [];

afterEach(() => {
  for (const ui of mounted) ui.unmount();
  mounted = [];
});

/** The dashboard on a fake 100-column terminal, its first frame painted and its keys listening. */
async function showDashboard(config: Config = testConfig()): Promise<Screen> {
  const bus = new TelemetryBus();
  const actions = fakeActions();
  const ui = render(<Dashboard bus={bus} config={() => config} listen={LISTEN} startedAt={Date.now() - 192_000} actions={actions} />);
  mounted.push(ui);
  await waitForFrame(ui, (f) => expect(f).toContain('recent requests'));
  await sleep(30); // let effects (bus subscription, raw-mode input) attach
  return { bus, actions, ui, emit: (...events) => events.forEach((e) => bus.emit(e)) };
}

describe('Dashboard: what a person reads', () => {
  it('lists every route and its tiers in order, healthy, with the header and a hint', async () => {
    const { ui } = await showDashboard();
    const frame = frameText(ui);
    expect(frame).toContain(`llm-route  ${LISTEN}`);
    expect(frame).toContain('0.0 req/s');
    expect(frame).toContain('0 active streams');
    expect(frame).toContain('up 3m12s');
    expect(frame).toContain('tiers /t/llm-route.yaml');
    expect(frame).toMatch(/chat\n.*local.*\n.*cloud.*\nembed\n.*canary.*\n.*main/);
    expect(rowOf(frame, 'local')).toMatch(/ollama\/qwen2\.5:7b\s+healthy\s+100\s/);
    expect(rowOf(frame, 'canary')).toMatch(/openai\/gpt-4\.1-nano\s+healthy\s+25\s/);
    expect(frame).toContain(`no requests yet: point an OpenAI client at ${LISTEN}/v1 with model "chat"`);
    expect(frame).toContain('nothing notable yet');
    expect(frame).toContain('↑↓ select   k kill/restore   p probe   r reload   ? help   q quit');
  });

  it('shows a failed-over request as the way it took, and the TTFT percentiles', async () => {
    const { emit, ui } = await showDashboard();
    emit(
      ...requestEvents(
        'chat',
        [
          { tier: 'local', attempt: 1, outcome: 'ttft_timeout', ms: 2500 },
          { tier: 'cloud', attempt: 1, outcome: 'ok', ms: 310 },
        ],
        { ttftMs: 2810 },
      ),
    );
    for (const ms of [120, 180, 240, 900]) {
      emit(...requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms }], { ttftMs: ms }));
    }
    const frame = await waitForFrame(ui, (f) => expect(f).toContain('local ✗ ttft 2.5s → cloud ✓'));
    const failedOver = frame.split('\n').find((l) => l.includes('local ✗ ttft 2.5s → cloud ✓')) ?? '';
    expect(failedOver).toMatch(/\d\d:\d\d:\d\d\s+chat\s+chat\s+200\s+2\.8s\s+143\s+local ✗ ttft 2\.5s → cloud ✓/);
    // local: 5 requests, 1 error, 1 failover; p50 180ms, p95 = p99 = 900ms (nearest rank of 4)
    expect(rowOf(frame, 'local')).toMatch(/healthy\s+100\s+0\s+5\s+1\s+1\s+180ms\s+900ms\s+900ms/);
    // cloud's own TTFT (310 ms), not the 2.8 s the client waited
    expect(rowOf(frame, 'cloud')).toMatch(/healthy\s+100\s+0\s+1\s+0\s+0\s+310ms\s+310ms\s+310ms/);
    // the client-seen TTFT (arrival to commit) stays in the header and the recent list
    expect(frame).toMatch(/client TTFT p50 240ms/);
    expect(frame).toContain('0.5 req/s');
  });

  it("names each request's client protocol in the recent list, Ollama's API among them", async () => {
    const { emit, ui } = await showDashboard();
    emit(...requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 120 }], { ttftMs: 130, protocol: 'ollama' }));
    emit(...requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'ok', ms: 300 }], { ttftMs: 310, protocol: 'messages' }));
    const frame = await waitForFrame(ui, (f) => expect(f).toMatch(/chat\s+messages\s+200/));
    expect(frame).toMatch(/\d\d:\d\d:\d\d\s+chat\s+ollama\s+200\s+130ms\s+143\s+local ✓/);
  });

  it('shows a tier that went down, and says why in the log', async () => {
    const { emit, ui } = await showDashboard();
    emit({ type: 'tier_state', route: 'chat', tier: 'local', from: 'healthy', to: 'down', reason: 'connection refused 3 times', retryAt: Date.now() + 8000 });
    const frame = await waitForFrame(ui, (f) => expect(rowOf(f, 'local')).toMatch(/\sdown\s/));
    expect(rowOf(frame, 'cloud')).toMatch(/\shealthy\s/);
    expect(frame).toMatch(/chat\/local down: connection refused 3 times, next try in [78]\.\ds/);
  });

  it('shows weight overrides: killed, admin with time left, rolled back', async () => {
    const { emit, ui } = await showDashboard();
    emit(
      {
        type: 'weight',
        route: 'chat',
        tier: 'local',
        weight: 0,
        configured: 100,
        source: 'admin',
        layers: { ...NO_LAYERS, admin: { weight: 0, expiresAt: null } },
      },
      {
        type: 'weight',
        route: 'embed',
        tier: 'canary',
        weight: 10,
        configured: 25,
        source: 'admin',
        reason: 'for 180 s',
        expiresAt: Date.now() + 180_000,
        layers: { ...NO_LAYERS, admin: { weight: 10, expiresAt: Date.now() + 180_000 } },
      },
      { type: 'rollback', route: 'embed', tier: 'main', reason: 'ttft_p99', observed: 3200, threshold: 2500, requests: 45, windowS: 60 },
      {
        type: 'weight',
        route: 'embed',
        tier: 'main',
        weight: 0,
        configured: 100,
        source: 'rollback',
        reason: 'TTFT p99 3200 ms > 2500 ms over 45 requests in 60 s',
        layers: { ...NO_LAYERS, rollback: 'TTFT p99 3200 ms > 2500 ms over 45 requests in 60 s' },
      },
    );
    const frame = await waitForFrame(ui, (f) => expect(rowOf(f, 'main')).toContain('0 (rolled back)'));
    expect(rowOf(frame, 'local')).toMatch(/healthy\s+0 \(killed\)\s/);
    expect(rowOf(frame, 'canary')).toContain('10 (admin, 3m left)');
    expect(rowOf(frame, 'cloud')).toMatch(/healthy\s+100\s/);
    expect(frame).toContain('chat/local weight 100 → 0 (killed)');
    expect(frame).toContain('rollback embed/main: ttft p99 3.2s > 2.5s over 60s (45 requests), weight → 0');
  });

  it('counts committed streams as live until they end', async () => {
    const { emit, ui } = await showDashboard();
    const events = requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'ok', ms: 400 }]);
    const end = events.pop() as TelemetryEvent;
    emit(...events);
    let frame = await waitForFrame(ui, (f) => expect(f).toContain('1 active stream '));
    expect(rowOf(frame, 'cloud')).toMatch(/100\s+1\s+1\s+0\s+0\s+400ms/);
    emit(end);
    frame = await waitForFrame(ui, (f) => expect(f).toContain('0 active streams'));
    expect(rowOf(frame, 'cloud')).toMatch(/100\s+0\s+1\s+0\s+0\s+400ms/);
  });

  it("shows each tier's prompt-cache hit rate, – where its server reports none", async () => {
    const { emit, ui } = await showDashboard();
    resizeTo(ui, 140);
    const usage = { prompt_tokens: 3000, completion_tokens: 5, cached_tokens: 2940 };
    emit(...requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 100 }], { usage }));
    emit(...requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'ok', ms: 100 }], { usage: { prompt_tokens: 30, completion_tokens: 5 } }));
    const frame = await waitForFrame(ui, (f) => expect(rowOf(f, 'local')).toMatch(/\s98%\s/));
    expect(frame).toMatch(/p99\s+cache\s+ttft trend/);
    expect(rowOf(frame, 'cloud')).toMatch(/ms\s+–\s/);
  });

  it('drops the trend, then provider/model, then p95 as the terminal narrows; rows never wrap', async () => {
    const { emit, ui } = await showDashboard();
    for (const ms of [100, 200, 400, 800]) emit(...requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms }], { ttftMs: ms }));
    resizeTo(ui, 140);
    let frame = await waitForFrame(ui, (f) => expect(f).toContain('ttft trend'));
    expect(rowOf(frame, 'local')).toContain('▂▃▅█');
    expect(frame).toContain('provider/model');

    resizeTo(ui, 100);
    frame = await waitForFrame(ui, (f) => expect(f).not.toContain('ttft trend'));
    expect(frame).toContain('provider/model');

    resizeTo(ui, 80);
    frame = await waitForFrame(ui, (f) => expect(f).not.toContain('provider/model'));
    expect(frame).toMatch(/p50\s+p95\s+p99/);

    resizeTo(ui, 70);
    frame = await waitForFrame(ui, (f) => expect(f).not.toContain('p95'));
    expect(frame).toMatch(/p50\s+p99/);
    expect(rowOf(frame, 'local')).toMatch(/healthy\s+100\s+0\s+4\s+0\s+0\s+200ms\s+800ms$/);
    for (const line of frame.split('\n')) expect(line.length).toBeLessThanOrEqual(70);

    // Narrower still: lines are cut, never wrapped (each tier keeps exactly one line).
    resizeTo(ui, 40);
    frame = await waitForFrame(ui, (f) => expect(f.split('\n').every((line) => line.length <= 40)).toBe(true));
    expect(frame).toMatch(/chat\n› local .*\n {2}cloud .*\nembed\n {2}canary .*\n {2}main /);
  });
});

describe('Dashboard: keys', () => {
  it('k toggles the kill switch of the selected tier; arrows move the selection', async () => {
    const { actions, emit, ui } = await showDashboard();
    expect(rowOf(frameText(ui), 'local')).toMatch(/^› local/);

    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenCalledWith('chat', 'local', true));
    await waitForFrame(ui, (f) => expect(f).toContain('killing chat/local…'));

    ui.stdin.write(DOWN);
    await waitForFrame(ui, (f) => expect(rowOf(f, 'cloud')).toMatch(/^› cloud/));
    expect(rowOf(frameText(ui), 'local')).toMatch(/^ {2}local/);
    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenLastCalledWith('chat', 'cloud', true));

    // Across routes, and back: a killed tier's k lifts the kill switch.
    ui.stdin.write(DOWN);
    ui.stdin.write(DOWN);
    await waitForFrame(ui, (f) => expect(rowOf(f, 'main')).toMatch(/^› main/));
    emit({
      type: 'weight',
      route: 'embed',
      tier: 'main',
      weight: 0,
      configured: 100,
      source: 'admin',
      layers: { ...NO_LAYERS, admin: { weight: 0, expiresAt: null } },
    });
    await waitForFrame(ui, (f) => expect(rowOf(f, 'main')).toContain('0 (killed)'));
    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenLastCalledWith('embed', 'main', false));

    // A rolled-back tier (weight 0, no kill switch): k turns the kill switch on, never restores it.
    emit({
      type: 'weight',
      route: 'embed',
      tier: 'main',
      weight: 0,
      configured: 100,
      source: 'rollback',
      reason: 'error rate',
      layers: { ...NO_LAYERS, rollback: 'error rate' },
    });
    await waitForFrame(ui, (f) => expect(rowOf(f, 'main')).toContain('0 (rolled back)'));
    ui.stdin.write('k');
    await until(() => expect(actions.setKill).toHaveBeenLastCalledWith('embed', 'main', true));
    await waitForFrame(ui, (f) => expect(f).toContain('killing embed/main…'));

    ui.stdin.write(DOWN); // already last: stays
    ui.stdin.write(UP);
    await waitForFrame(ui, (f) => expect(rowOf(f, 'canary')).toMatch(/^› canary/));
  });

  it('? shows the help and hides it again; p probes; r reloads', async () => {
    const { actions, ui } = await showDashboard();
    ui.stdin.write('?');
    let frame = await waitForFrame(ui, (f) => expect(f).toContain('kill switch of the selected tier'));
    expect(frame).toContain('reload the tier file');
    expect(frame).toContain('time to first token, last 60 s');
    // Every word the table and header show is explained: ttft trend, ctx, pending.
    expect(frame).toMatch(/ttft trend\s+time to first token of its last 12 streams, oldest first/);
    expect(frame).toMatch(/ctx\s+context window in tokens the fit check uses/);
    expect(frame).toMatch(/cache\s+prompt tokens its server read from its cache/);
    expect(frame).toMatch(/pending\s+requests still waiting for a first token/);
    expect(frame).not.toContain('recent requests');
    ui.stdin.write('?');
    frame = await waitForFrame(ui, (f) => expect(f).toContain('recent requests'));
    expect(frame).not.toContain('kill switch of the selected tier');

    ui.stdin.write('p');
    await until(() => expect(actions.probe).toHaveBeenCalledTimes(1));
    ui.stdin.write('r');
    await until(() => expect(actions.reload).toHaveBeenCalledTimes(1));
    await waitForFrame(ui, (f) => expect(f).toContain('reloading the tier file…'));
  });

  it('q and Ctrl-C ask to quit', async () => {
    const { actions, ui } = await showDashboard();
    ui.stdin.write('q');
    await until(() => expect(actions.quit).toHaveBeenCalledTimes(1));
    ui.stdin.write('\u0003');
    await until(() => expect(actions.quit).toHaveBeenCalledTimes(2));
    expect(actions.setKill).not.toHaveBeenCalled();
  });

  it('off a terminal, keys are off (raw mode unsupported) and the screen says so', async () => {
    const bus = new TelemetryBus();
    const config = testConfig();
    const actions = fakeActions();
    const stdout = new FakeStdout();
    const stdin = new PipeStdin();
    const instance = inkRender(<Dashboard bus={bus} config={() => config} listen={LISTEN} startedAt={Date.now()} actions={actions} />, {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: new FakeStdout() as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
    });
    try {
      await until(() => expect(stdout.lastFrame()).toContain('keys off: stdin is not a terminal'));
      expect(stdin.listenerCount('readable')).toBe(0);
      bus.emit({ type: 'tier_state', route: 'chat', tier: 'cloud', from: 'healthy', to: 'degraded', reason: 'slow' });
      await until(() => expect(rowOf(stdout.lastFrame(), 'cloud')).toMatch(/\sdegraded\s/));
    } finally {
      instance.unmount();
    }
  });

  it('an action that throws becomes a notice, not a crash', async () => {
    const { actions, ui } = await showDashboard();
    actions.reload.mockImplementation(() => {
      throw new Error('control plane not ready');
    });
    ui.stdin.write('r');
    await waitForFrame(ui, (f) => expect(f).toContain('failed: control plane not ready'));
  });
});

describe('Dashboard: repaints', () => {
  it('repaints on a capped timer (~8 a second), not once per event', async () => {
    const { emit, ui } = await showDashboard();
    const before = ui.frames.length;
    // 100 requests (500 events) spread over about half a second.
    for (let i = 0; i < 100; i++) {
      emit(...requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 100 + (i % 50) }]));
      await sleep(5);
    }
    await waitForFrame(ui, (f) => expect(rowOf(f, 'local')).toMatch(/\s100\s/));
    const frames = ui.frames.length - before;
    expect(frames).toBeGreaterThan(0);
    expect(frames).toBeLessThan(20);
  });
});
