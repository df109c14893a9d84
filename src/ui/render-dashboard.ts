import { render } from 'ink';
import { createElement } from 'react';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { DashboardActions } from './actions.js';
import { Dashboard } from './app.js';
import type { DayTotals } from '../usage/store.js';

export interface RenderDashboardOptions {
  bus: TelemetryBus;
  /** The config in force now (it can be reloaded). */
  config: () => Config;
  listen: string;
  startedAt: number;
  actions: DashboardActions;
  usageBaseline?: Promise<DayTotals | null>;
}

export interface DashboardHandle {
  unmount(): void;
  /** Settles once the dashboard is unmounted. */
  waitUntilExit(): Promise<void>;
}

/**
 * Shows the dashboard on the terminal. Ctrl-C is not Ink's to handle: `serve` drains on
 * SIGINT, and the dashboard maps the Ctrl-C key to actions.quit(). Console output is routed
 * above the frame so it cannot tear the screen.
 */
export function renderDashboard(options: RenderDashboardOptions): DashboardHandle {
  const instance = render(createElement(Dashboard, options), { exitOnCtrlC: false, patchConsole: true });
  return {
    unmount: () => instance.unmount(),
    waitUntilExit: async () => {
      await instance.waitUntilExit();
    },
  };
}
