import type { AppContext } from '../control/app-context.js';
import type { ProxyServer } from '../server/server.js';
import type { DashboardActions } from '../ui/actions.js';
import type { DashboardHandle } from '../ui/render-dashboard.js';

/** The live UI of a running proxy, its keys wired to the control plane (`serve` and `demo`). */
export async function showDashboard(server: ProxyServer, url: string, quit: (reason: string) => void): Promise<DashboardHandle> {
  const { renderDashboard } = await import('../ui/render-dashboard.js');
  const app = server.app;
  return renderDashboard({
    bus: app.telemetry,
    config: () => app.config,
    listen: url,
    startedAt: app.startedAt,
    actions: dashboardActions(app, quit),
    usageBaseline: server.usage.startTotals,
  });
}

/**
 * What the UI's keys do: `k` is the kill switch (an admin override to 0, or lifting that
 * override: never a rollback or an alert, which keep their 0), `p` checks, `r` reloads.
 */
export function dashboardActions(app: AppContext, quit: (reason: string) => void): DashboardActions {
  return {
    quit: () => quit('q'),
    setKill: (route, tier, killed) => {
      if (killed) app.weights.setOverride(route, tier, 0);
      else app.weights.clearOverride(route, tier);
    },
    probe: () => void app.checkNow(),
    reload: () => void app.reload(),
  };
}
