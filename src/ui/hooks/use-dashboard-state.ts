import { useEffect, useState } from 'react';
import type { TelemetryBus } from '../../telemetry/bus.js';
import { DashboardState } from '../dashboard-state.js';

/** At most this many frames a second, whatever the event rate. */
const FRAME_MS = 125;
/** Uptime, rates and windows move without events: repaint at least this often. */
const IDLE_REPAINT_MS = 1000;

/**
 * Subscribes a DashboardState to the bus and re-renders on a capped timer, never per event:
 * each event only updates counters and marks the state dirty.
 */
export function useDashboardState(bus: TelemetryBus, clock: () => number = Date.now): DashboardState {
  const [state] = useState(() => new DashboardState());
  const [, setFrame] = useState(0);
  useEffect(() => {
    let dirty = false;
    let lastPaint = clock();
    const unsubscribe = bus.subscribe((event) => {
      state.apply(event, clock());
      dirty = true;
    });
    const timer = setInterval(() => {
      const now = clock();
      if (!dirty && now - lastPaint < IDLE_REPAINT_MS) return;
      dirty = false;
      lastPaint = now;
      setFrame((n) => n + 1);
    }, FRAME_MS);
    timer.unref();
    return () => {
      unsubscribe();
      clearInterval(timer);
    };
  }, [bus, state, clock]);
  return state;
}
