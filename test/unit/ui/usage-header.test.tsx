import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { TelemetryBus } from '../../../src/telemetry/bus.js';
import { Dashboard } from '../../../src/ui/app.js';
import { DashboardState } from '../../../src/ui/dashboard-state.js';
import type { DayTotals } from '../../../src/usage/store.js';
import { requestEvents } from './fixtures.js';
import { fakeActions, sleep, waitForFrame, type Rendered } from './render-helpers.js';

const CONFIG = loadConfigText(
  `
version: 1
providers:
  ollama: { type: openai, base_url: "http://127.0.0.1:11434/v1" }
  openai:
    type: openai
    base_url: https://api.openai.com/v1
    price: { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.5 }
routes:
  chat:
    tiers:
      - { name: local, provider: ollama, model: m }
      - { name: cloud, provider: openai, model: gpt }
`,
  '/t/llm-route.yaml',
  {},
);

const BASELINE: DayTotals = { requests: 10, promptTokens: 10_000, completionTokens: 2_000, cachedTokens: 0, costUsd: 0.5, savedUsd: 0, saverTokensSaved: 300 };
const NOON = Date.UTC(2025, 2, 3, 12, 0, 0);

describe("today's cost and tokens", () => {
  it("are the log's totals at start plus this session's requests, priced per tier; savers' savings summed", () => {
    const state = new DashboardState();
    state.setUsageBaseline(BASELINE, NOON);
    for (const event of requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'ok', ms: 300 }], {
      usage: { prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 400 },
      savers: [
        { saver: 'whitespace', before: 1200, after: 1100 },
        { saver: 'dedupe_system', before: 1100, after: 1000 },
      ],
    }))
      state.apply(event, NOON);
    for (const event of requestEvents('chat', [{ tier: 'local', attempt: 1, outcome: 'ok', ms: 90 }], { usage: { prompt_tokens: 50, completion_tokens: 20 } }))
      state.apply(event, NOON);
    const today = state.snapshot(CONFIG, NOON).today;
    expect(today).toMatchObject({ promptTokens: 11_050, completionTokens: 2_520, cachedTokens: 400, saverTokensSaved: 500 });
    expect(today.costUsd).toBeCloseTo(0.5 + (600 * 1 + 400 * 0.5 + 500 * 2) / 1e6, 12);
    // After UTC midnight, a new day: nothing from yesterday counts.
    const tomorrow = state.snapshot(CONFIG, NOON + 86_400_000).today;
    expect(tomorrow).toEqual({ costUsd: 0, promptTokens: 0, completionTokens: 0, cachedTokens: 0, saverTokensSaved: 0 });
  });

  it('a degraded usage log is a warning until it recovers, and a log line each way', () => {
    const state = new DashboardState();
    state.apply({ type: 'usage_degraded', path: '/var/u.db', error: 'full: database or disk is full (SQLITE_FULL)' }, NOON);
    expect(state.snapshot(CONFIG, NOON).usageWarning).toBe(
      'usage log unusable (full: database or disk is full (SQLITE_FULL)); requests are served, rows dropped',
    );
    state.apply({ type: 'usage_recovered', path: '/var/u.db', dropped: 42 }, NOON + 1000);
    const snapshot = state.snapshot(CONFIG, NOON + 1000);
    expect(snapshot.usageWarning).toBeNull();
    expect(snapshot.log.map((l) => l.text)).toEqual([
      'usage log /var/u.db: full: database or disk is full (SQLITE_FULL); requests are served, their rows dropped until it reopens',
      'usage log /var/u.db usable again (42 rows dropped meanwhile)',
    ]);
  });
});

describe('the header', () => {
  let ui: Rendered | null = null;
  afterEach(() => ui?.unmount());

  it("shows today's cost and tokens (with the log's totals at start), savers' savings, and the usage warning", async () => {
    const bus = new TelemetryBus();
    ui = render(
      <Dashboard
        bus={bus}
        config={() => CONFIG}
        listen="http://127.0.0.1:4141"
        startedAt={Date.now()}
        actions={fakeActions()}
        usageBaseline={Promise.resolve(BASELINE)}
      />,
    );
    await waitForFrame(ui, (f) => expect(f).toContain('today in the usage log $0.500000   10.0k in / 2000 out tokens   savers saved 300 tokens'));
    await sleep(30);
    for (const event of requestEvents('chat', [{ tier: 'cloud', attempt: 1, outcome: 'ok', ms: 300 }], {
      usage: { prompt_tokens: 2000, completion_tokens: 1000 },
    }))
      bus.emit(event);
    await waitForFrame(ui, (f) => expect(f).toContain('today in the usage log $0.504000   12.0k in / 3000 out tokens'));
    bus.emit({ type: 'usage_degraded', path: '/var/u.db', error: 'corrupt (not a usable SQLite database): file is not a database (SQLITE_NOTADB)' });
    await waitForFrame(ui, (f) => expect(f).toContain('usage log unusable (corrupt'));
  });

  it('shows a tool call written as text while it is held, growing, and lets it go when it ends', async () => {
    const bus = new TelemetryBus();
    ui = render(<Dashboard bus={bus} config={() => CONFIG} listen="http://127.0.0.1:4141" startedAt={Date.now()} actions={fakeActions()} />);
    bus.emit({ type: 'request_start', id: 'r1', route: 'chat', stream: true, protocol: 'messages' });
    bus.emit({ type: 'tool_text_hold', id: 'r1', route: 'chat', tier: 'local', chars: 120, ms: 0 });
    await waitForFrame(ui, (f) => expect(f).toContain('holding a tool call written as text: chat/local 120 chars, 0s'));
    bus.emit({ type: 'tool_text_hold', id: 'r1', route: 'chat', tier: 'local', chars: 15_400, ms: 12_000 });
    await waitForFrame(ui, (f) => expect(f).toContain('chat/local 15.4k chars, 12s'));
    bus.emit({ type: 'tool_text_hold', id: 'r1', route: 'chat', tier: 'local', chars: 0, ms: 0 });
    await waitForFrame(ui, (f) => expect(f).not.toContain('holding a tool call'));
  });
});
