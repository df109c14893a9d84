import { isAbsolute, relative } from 'node:path';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/schema.js';
import { type TierKind, tierKind } from '../config/tier-kind.js';
import { tierNoticeText } from '../health/tier-notice.js';
import type { ProxyServer } from '../server/server.js';
import type { TelemetryBus } from '../telemetry/bus.js';
import type { TelemetryEvent, TierStateChanged } from '../telemetry/events.js';
import { openUsageDb } from '../usage/open-log.js';
import { usagePath } from '../usage/paths.js';
import { type RunSummary, runSummary } from '../usage/run-summary.js';
import { formatInt, formatUsd } from '../usage/text-table.js';
import { formatClock, formatDuration } from '../util/format.js';
import { plural } from './statusline-text.js';

// What `exec` says about its own run on stderr: the start-up notice before the command starts,
// and the exit summary once it has exited. Nothing in between: the command owns the screen.

/**
 * Before the command starts: each tier that is unreachable or lacks its model, and where its
 * requests go, as a line on stderr (with --log, as an event of the JSON-lines log instead).
 */
export async function announceTiers(server: ProxyServer, opts: { log: boolean; dispatcher?: Dispatcher; signal?: AbortSignal }): Promise<void> {
  const notices = await server.announceUnavailableTiers(opts);
  if (!opts.log) for (const notice of notices) process.stderr.write(`llm-route: ${tierNoticeText(notice)}\n`);
}

/** Tier state changes kept for the exit summary; beyond this many, only counted. */
const MAX_CHANGES = 20;

/** While the command runs: what happened to the tiers, kept for the exit summary instead of printed over the command's screen. */
export class RunWatch {
  readonly changes: Array<{ at: number; event: TierStateChanged }> = [];
  dropped = 0;
  private readonly unsubscribe: () => void;

  constructor(telemetry: TelemetryBus) {
    this.unsubscribe = telemetry.subscribe((event: TelemetryEvent) => {
      if (event.type !== 'tier_state') return;
      if (this.changes.length < MAX_CHANGES) this.changes.push({ at: Date.now(), event });
      else this.dropped++;
    });
  }

  stop(): void {
    this.unsubscribe();
  }
}

/** One run: its rows in the usage log are `run`'s from `since` to `until`. */
export interface RunWindow {
  run: string;
  since: number;
  until: number;
}

/** The exit summary: lines for people, and the numbers themselves (null when the usage log could not be read). */
export interface ExitSummary {
  lines: string[];
  summary: RunSummary | null;
}

/**
 * The exit summary, from the usage log (exact: the numbers `llm-route usage --since <start>
 * --run <id>` prints): requests per tier, local and cloud, fallbacks and why, recovered tool
 * calls, tokens and cost; then the tier state changes seen during the run.
 */
export function exitSummary(config: Config, window: RunWindow, watch: RunWatch): ExitSummary {
  const lines: string[] = [];
  let summary: RunSummary | null = null;
  if (!config.usage.enabled) lines.push('llm-route: no exit summary: the usage log is off (usage.enabled: false)');
  else {
    const log = openUsageDb(usagePath(config));
    if (!log.ok) lines.push(`llm-route: no exit summary: ${log.message}`);
    else {
      try {
        summary = runSummary(log.db, window);
        lines.push(...summaryLines(summary, config, window));
      } catch (err) {
        lines.push(`llm-route: no exit summary: cannot read ${log.path}: ${(err as Error).message}`);
      } finally {
        log.db.close();
      }
    }
  }
  if (watch.changes.length > 0) {
    const changes = watch.changes.map(({ at, event }) => `${formatClock(at)} ${event.route}/${event.tier} ${event.to} (${event.reason})`);
    if (watch.dropped > 0) changes.push(`… ${watch.dropped} more`);
    lines.push(`llm-route: during the run: ${changes.join('; ')}`);
  }
  return { lines, summary };
}

function summaryLines(summary: RunSummary, config: Config, window: RunWindow): string[] {
  const totals = summary.report.totals;
  const took = formatDuration(window.until - window.since);
  if (totals.requests === 0) return [`llm-route: this run (${took}): no requests`];
  const kinds = tierKinds(config);
  const count = { local: 0, cloud: 0, failed: 0, other: 0 };
  for (const group of summary.report.groups) count[kinds.get(group.key) ?? (group.key.endsWith('/none') ? 'failed' : 'other')] += group.requests;
  const split = [`${count.local} local`, `${count.cloud} cloud`];
  if (count.failed > 0) split.push(`${count.failed} failed`);
  if (count.other > 0) split.push(`${count.other} on tiers since removed`);
  const perTier = summary.report.groups.map((g) => `${g.key} ${g.requests}`).join(', ');

  const reasons = summary.fallbackReasons.slice(0, 3).map((r) => `${r.route}/${r.tier} ${r.outcome} ×${r.count}`);
  if (summary.fallbackReasons.length > 3) reasons.push('…');
  const fallbacks = `${plural(totals.failovers, 'fallback')}${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}`;
  const cached = totals.cached_tokens > 0 ? `, ${formatInt(totals.cached_tokens)} cached` : '';
  const tokens = `${formatInt(totals.prompt_tokens)} in + ${formatInt(totals.completion_tokens)} out tokens${cached}`;
  const cost = `${formatUsd(totals.cost_usd)}${totals.saved_usd > 0 ? ` (saved ${formatUsd(totals.saved_usd)} on local tiers)` : ''}`;
  const recovered = `${plural(summary.toolCallsRecovered, 'tool call')} recovered`;
  const near = relative(process.cwd(), config.file);
  const file = near === '' || near.startsWith('..') || isAbsolute(near) ? config.file : near;
  return [
    `llm-route: this run (${took}): ${plural(totals.requests, 'request')}, ${split.join(' / ')} (${perTier}); ${fallbacks}; ${recovered}; ${tokens}; ${cost}`,
    `llm-route: the same from the usage log: llm-route usage -c ${file} --since ${new Date(window.since).toISOString()} --run ${window.run} --by tier`,
  ];
}

/** `route/tier` → local or cloud, for every tier of the tier file. */
function tierKinds(config: Config): Map<string, TierKind> {
  const kinds = new Map<string, TierKind>();
  for (const route of config.routes.values()) for (const tier of route.tiers) kinds.set(`${route.name}/${tier.name}`, tierKind(tier));
  return kinds;
}
