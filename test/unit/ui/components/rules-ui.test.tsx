import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { RecentRequests } from '../../../../src/ui/components/recent-requests.js';
import { DashboardState } from '../../../../src/ui/dashboard-state.js';
import { requestEvents, testConfig } from '../fixtures.js';

const AT = Date.UTC(2025, 2, 3, 12, 0, 0);
const config = testConfig();
const [route] = [...config.routes.values()];
const [local] = route.tiers;

// Routing by purpose (docs/rules.md) in the dashboard: the route a rule chose, and a truncation found after the answer.
describe('the dashboard and routing by purpose', () => {
  it('the recent list shows the route a rule chose and names the rule; a request no rule chose shows none', () => {
    const state = new DashboardState();
    for (const event of requestEvents(route.name, [{ tier: local.name, attempt: 1, outcome: 'ok', ms: 5 }], { tier: local.name, rule: 'background' }))
      state.apply(event, AT);
    for (const event of requestEvents(route.name, [{ tier: local.name, attempt: 1, outcome: 'ok', ms: 5 }], { tier: local.name })) state.apply(event, AT + 1);
    const recent = state.snapshot(config, AT + 1).recent;
    expect(recent.map((r) => [r.route, r.rule])).toEqual([
      [route.name, undefined],
      [route.name, 'background'],
    ]);
    const { lastFrame, unmount } = render(<RecentRequests requests={recent} rows={5} hint="" />);
    const lines = (lastFrame() ?? '').split('\n');
    unmount();
    expect(lines.find((l) => l.includes('(rule background)'))).toContain(route.name);
    expect(lines.filter((l) => l.includes('(rule '))).toHaveLength(1);
  });

  it('a truncation found after the answer warns once per tier, like one found before it', () => {
    const state = new DashboardState();
    for (let i = 0; i < 2; i++) state.apply({ type: 'prompt_truncated', id: `r${i}`, route: route.name, tier: local.name, sent: 8000, read: 2048 }, AT);
    const warnings = state.snapshot(config, AT).log.filter((l) => l.text.includes('cut a prompt silently'));
    expect(warnings.map((w) => w.text)).toEqual([
      `${route.name}/${local.name} cut a prompt silently: sent 8000 tokens, it read 2048; longer prompts now skip it (set its context or num_ctx)`,
    ]);
  });
});
