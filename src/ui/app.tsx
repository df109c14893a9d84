import { relative } from 'node:path';
import { Box } from 'ink';
import { useCallback, useEffect, useState } from 'react';
import type { Config } from '../config/schema.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { DashboardActions } from './actions.js';
import { Footer } from './components/footer.js';
import { Header } from './components/header.js';
import { HelpOverlay } from './components/help-overlay.js';
import { LogPane } from './components/log-pane.js';
import { RecentRequests } from './components/recent-requests.js';
import { RouteTable } from './components/route-table.js';
import type { DashboardState } from './dashboard-state.js';
import { useDashboardKeys, type SelectableTier } from './hooks/use-dashboard-keys.js';
import { useDashboardState } from './hooks/use-dashboard-state.js';
import { useTerminalSize } from './hooks/use-terminal-size.js';
import { paneHeights } from './layout/pane-heights.js';
import type { DayTotals } from '../usage/store.js';

const NOTICE_MS = 5000;

export interface DashboardProps {
  bus: TelemetryBus;
  /** The config in force now: it changes when the tier file is reloaded. */
  config: () => Config;
  /** Where the proxy listens, e.g. http://127.0.0.1:4141. */
  listen: string;
  /** Epoch ms the server started. */
  startedAt: number;
  actions: DashboardActions;
  /** Today's totals in the usage log before this session wrote to it (the header adds this session's). */
  usageBaseline?: Promise<DayTotals | null>;
}

/** The live screen of `llm-route serve`: a subscriber of telemetry events, repainted at most ~8 times a second. */
export function Dashboard({ bus, config, listen, startedAt, actions, usageBaseline }: DashboardProps) {
  const state = useDashboardState(bus);
  useEffect(() => {
    void usageBaseline?.then(
      (totals) => totals && state.setUsageBaseline(totals, Date.now()),
      () => undefined,
    );
  }, [usageBaseline, state]);
  const { columns, rows } = useTerminalSize();
  const [helpOpen, setHelpOpen] = useState(false);
  const [notice, setNotice] = useState<{ text: string; at: number } | null>(null);

  const tiers = useCallback(() => selectableTiers(config(), state), [config, state]);
  const { keysEnabled, selected } = useDashboardKeys({
    actions,
    tiers,
    toggleHelp: () => setHelpOpen((open) => !open),
    closeHelp: () => setHelpOpen(false),
    notify: (text) => setNotice({ text, at: Date.now() }),
  });

  const now = Date.now();
  const current = config();
  const snapshot = state.snapshot(current, now);
  const tierCount = snapshot.routes.reduce((n, r) => n + r.tiers.length, 0);
  // The header's usage line (and its warning) take rows the panes must leave free, like the table's.
  const usageLines = 1 + (snapshot.usageWarning ? 1 : 0) + (snapshot.stateWarning ? 1 : 0) + (snapshot.heldCalls.length > 0 ? 1 : 0);
  const heights = paneHeights(rows, usageLines + 1 + snapshot.routes.length + tierCount);
  const firstRoute = snapshot.routes[0]?.name ?? 'ROUTE';

  return (
    <Box flexDirection="column" width={columns}>
      <Header
        listen={listen}
        tierFile={displayPath(current.file)}
        uptimeMs={now - startedAt}
        requestsPerSecond={snapshot.requestsPerSecond}
        activeStreams={snapshot.activeStreams}
        pending={snapshot.pending}
        clientTtftP50={snapshot.clientTtft?.p50 ?? null}
        today={snapshot.today}
        usageWarning={snapshot.usageWarning}
        stateWarning={snapshot.stateWarning}
        heldCalls={snapshot.heldCalls}
      />
      <Box marginTop={1}>
        <RouteTable routes={snapshot.routes} width={columns} selected={Math.min(selected, tierCount - 1)} />
      </Box>
      {helpOpen ? (
        <Box marginTop={1}>
          <HelpOverlay />
        </Box>
      ) : (
        <>
          <Box marginTop={1}>
            <RecentRequests
              requests={snapshot.recent}
              rows={heights.recent}
              hint={`no requests yet: point an OpenAI client at ${listen}/v1 with model "${firstRoute}"`}
            />
          </Box>
          <Box marginTop={1}>
            <LogPane lines={snapshot.log} rows={heights.log} />
          </Box>
        </>
      )}
      <Box marginTop={1}>
        <Footer keysEnabled={keysEnabled} notice={notice && now - notice.at < NOTICE_MS ? notice.text : null} />
      </Box>
    </Box>
  );
}

function selectableTiers(config: Config, state: DashboardState): SelectableTier[] {
  const out: SelectableTier[] = [];
  for (const route of config.routes.values()) {
    for (const tier of route.tiers) {
      out.push({ route: route.name, tier: tier.name, killed: () => state.killSwitchOn(route.name, tier.name) });
    }
  }
  return out;
}

/** The tier file relative to the working directory when it is inside it: shorter to read. */
function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !rel.startsWith('/') ? rel : file;
}
