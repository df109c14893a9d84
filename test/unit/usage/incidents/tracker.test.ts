import { describe, expect, it } from 'vitest';
import type { TelemetryEvent } from '../../../../src/telemetry/events.js';
import { IncidentTracker } from '../../../../src/usage/incidents/tracker.js';
import type { IncidentOpen } from '../../../../src/usage/store.js';
import { sleep, waitFor } from '../../../helpers/harness.js';

function tracker(downAfterMs = 30_000) {
  let now = 1_000_000;
  const opened: IncidentOpen[] = [];
  const closed: Array<{ key: string; at: number; by: string }> = [];
  const t = new IncidentTracker({ open: (i) => opened.push(i), close: (key, at, by) => closed.push({ key, at, by }) }, () => now, downAfterMs);
  return { t, opened, closed, advance: (ms: number) => (now += ms), at: () => now };
}

const weight = (w: number, source: 'admin' | 'alert' | 'rollback' | 'expired' | 'cleared' | 'reload', reason?: string): TelemetryEvent => ({
  type: 'weight',
  route: 'chat',
  tier: 'local',
  weight: w,
  configured: 100,
  source,
  layers: { admin: null, alerts: source === 'alert' && w === 0 ? ['alert'] : [], rollback: source === 'rollback' ? (reason ?? 'rollback') : null },
  ...(reason ? { reason } : {}),
});
const state = (from: 'healthy' | 'down' | 'degraded', to: 'healthy' | 'down' | 'degraded'): TelemetryEvent => ({
  type: 'tier_state',
  route: 'chat',
  tier: 'local',
  from,
  to,
  reason: '3 failures',
});

describe('incidents from control-plane events', () => {
  it('a rollback opens one; its restore (weight back above 0) closes it; a second rollback is a new one', () => {
    const { t, opened, closed, advance } = tracker();
    t.onEvent({ type: 'rollback', route: 'chat', tier: 'local', reason: 'ttft_p99', observed: 6200, threshold: 2000, requests: 40, windowS: 60 });
    t.onEvent(weight(0, 'rollback'));
    t.onEvent({ type: 'rollback', route: 'chat', tier: 'local', reason: 'ttft_p99', observed: 6300, threshold: 2000, requests: 41, windowS: 60 });
    expect(opened).toMatchObject([{ route: 'chat', tier: 'local', kind: 'rollback', trigger: { reason: 'ttft_p99', threshold: 2000, window_s: 60 } }]);
    advance(45_000);
    t.onEvent(weight(100, 'expired', 'rollback restored'));
    expect(closed).toEqual([{ key: opened[0].key, at: 1_045_000, by: 'restore' }]);
    t.onEvent({ type: 'rollback', route: 'chat', tier: 'local', reason: 'error_rate', observed: 0.5, threshold: 0.2, requests: 20, windowS: 60 });
    expect(opened).toHaveLength(2);
    expect(opened[1].key).not.toBe(opened[0].key);
    // A clear ends the rollback even while an alert still holds the weight at 0.
    t.onEvent(weight(0, 'cleared'));
    expect(closed.at(-1)).toMatchObject({ key: opened[1].key, by: 'cleared' });
  });

  it("an alert's kill switch opens one; an admin kill switch does not; the alert resolving closes it", () => {
    const { t, opened, closed } = tracker();
    t.onEvent(weight(0, 'admin'));
    expect(opened).toEqual([]);
    t.onEvent(weight(0, 'alert', 'alert CheapTierTTFT firing'));
    t.onEvent(weight(0, 'alert', 'alert Other firing'));
    expect(opened).toMatchObject([{ kind: 'alert', trigger: { alert: 'alert CheapTierTTFT firing' } }]);
    t.onEvent(weight(100, 'alert', 'alert CheapTierTTFT resolved'));
    expect(closed).toMatchObject([{ key: opened[0].key, by: 'restore' }]);
  });

  it('a tier down for longer than the threshold opens one dated when it went down; a shorter outage none', async () => {
    const { t, opened, closed, at } = tracker(60);
    t.onEvent(state('healthy', 'down'));
    t.onEvent(state('down', 'healthy'));
    await sleep(120);
    expect(opened).toEqual([]);
    const wentDown = at();
    t.onEvent(state('healthy', 'down'));
    await waitFor(() => opened.length > 0, 3000, 'the down incident');
    expect(opened).toMatchObject([{ kind: 'down', openedAt: wentDown, trigger: { reason: '3 failures' } }]);
    t.onEvent(state('down', 'degraded'));
    expect(closed).toMatchObject([{ key: opened[0].key, by: 'restore' }]);
  });

  it('closeAll closes what is open (a stopping proxy); stop cancels pending outages', async () => {
    const { t, opened, closed } = tracker(50);
    t.onEvent({ type: 'rollback', route: 'chat', tier: 'local', reason: 'error_rate', observed: 1, threshold: 0.5, requests: 5, windowS: 60 });
    t.onEvent(state('healthy', 'down'));
    t.closeAll('shutdown');
    t.stop();
    await sleep(100);
    expect(opened).toHaveLength(1);
    expect(closed).toMatchObject([{ key: opened[0].key, by: 'shutdown' }]);
  });
});
