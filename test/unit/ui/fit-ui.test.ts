import { beforeEach, describe, expect, it } from 'vitest';
import { recordDiscovered, resetTierFacts } from '../../../src/fit/tier-facts.js';
import { DashboardState } from '../../../src/ui/dashboard-state.js';
import { tierCellText } from '../../../src/ui/layout/tier-cells.js';
import { requestEvents, testConfig } from './fixtures.js';

const config = testConfig();
const [firstRoute] = [...config.routes.values()];
const [local, cloud] = firstRoute.tiers;
beforeEach(() => resetTierFacts());

describe('the UI and route by fit', () => {
  it("the tier table shows each tier's known window (– when unknown)", () => {
    recordDiscovered(local, { context: 40960, source: 'ollama /api/show' });
    const ui = new DashboardState();
    const [row, other] = ui.snapshot(config, 0).routes[0].tiers;
    expect(row.context).toBe(40960);
    expect(tierCellText(row, 'context')).toBe('41.0k');
    expect(tierCellText(other, 'context')).toBe('–');
  });

  it('a too_long skip is neither a request nor an error of the tier; a silent truncation is warned about once per tier', () => {
    const ui = new DashboardState();
    const at = 1_000;
    const truncated = { promptTruncated: { sent: 12_000, read: 2_048 } };
    for (const event of requestEvents(
      firstRoute.name,
      [
        { tier: local.name, attempt: 1, outcome: 'too_long', ms: 0 },
        { tier: cloud.name, attempt: 1, outcome: 'ok', ms: 5 },
      ],
      { tier: cloud.name },
    ))
      ui.apply(event, at);
    for (let i = 0; i < 2; i++)
      for (const event of requestEvents(firstRoute.name, [{ tier: local.name, attempt: 1, outcome: 'ok', ms: 5 }], { tier: local.name, ...truncated }))
        ui.apply(event, at);
    const snapshot = ui.snapshot(config, at);
    const row = snapshot.routes[0].tiers[0];
    expect(row.errors).toBe(0);
    expect(row.requests).toBe(2);
    const warnings = snapshot.log.filter((l) => l.text.includes('cut a prompt silently'));
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'bad',
        text: `${firstRoute.name}/${local.name} cut a prompt silently: sent 12000 tokens, it read 2048; longer prompts now skip it (set its context or num_ctx)`,
      }),
    ]);
  });

  it("discovery's news is one log line: a window learned, or unknown and why", () => {
    const ui = new DashboardState();
    ui.apply({ type: 'fit_discovered', route: 'chat', tier: 'local', context: 1024, context_source: 'llama.cpp /props', vision: false, tools: null }, 0);
    ui.apply(
      {
        type: 'fit_discovered',
        route: 'chat',
        tier: 'cloud',
        context: null,
        context_source: null,
        vision: null,
        tools: null,
        error: 'vllm: connection refused',
      },
      0,
    );
    expect(ui.snapshot(config, 0).log.map((l) => `${l.level} ${l.text}`)).toEqual([
      'info chat/local: context 1024 (llama.cpp /props), no images',
      'warn chat/cloud: context unknown (vllm: connection refused); no fit check',
    ]);
  });
});
