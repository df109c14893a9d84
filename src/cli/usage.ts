import { openUsageLogForReading } from '../usage/open-log.js';
import { parseSince } from '../usage/since.js';
import { GROUP_BY, usageReport, type GroupBy, type UsageReport } from '../usage/usage-report.js';
import { formatInt, formatMsOrDash, formatUsd, textTable } from '../usage/text-table.js';

export interface UsageOptions {
  config?: string;
  since?: string;
  by?: string;
  /** Only the requests one llm-route process served (the id exec's exit summary names). */
  run?: string;
  json?: boolean;
}

/** `llm-route usage`: requests, failovers, TTFT, tokens and cost from the usage log. Exit 2: no usable log or bad flags. */
export async function runUsage(opts: UsageOptions): Promise<number> {
  const now = Date.now();
  let since: number;
  try {
    since = parseSince(opts.since ?? '24h', now);
  } catch (err) {
    process.stderr.write(`llm-route usage: ${(err as Error).message}\n`);
    return 2;
  }
  const by = (opts.by ?? 'route') as GroupBy;
  if (!GROUP_BY.includes(by)) {
    process.stderr.write(`llm-route usage: invalid --by "${opts.by}": expected one of ${GROUP_BY.join(', ')}\n`);
    return 2;
  }
  const log = openUsageLogForReading(opts.config);
  if (!log.ok) {
    process.stderr.write(`llm-route usage: ${log.message}\n`);
    return 2;
  }
  let report: UsageReport;
  try {
    report = usageReport(log.db, { since, until: now, by, ...(opts.run === undefined ? {} : { run: opts.run }) });
  } catch (err) {
    process.stderr.write(`llm-route usage: cannot read ${log.path}: ${(err as Error).message}\n`);
    return 2;
  } finally {
    log.db.close();
  }
  // A route of another tier file that shares this log (the default log is one per user) is named as such.
  const others = by === 'route' && log.tierFile ? report.groups.map((g) => g.key).filter((key) => key !== '(none)' && !log.tierFile?.routes.includes(key)) : [];
  const shown = others.length > 0 ? { ...report, not_in_tier_file: others } : report;
  process.stdout.write(opts.json ? `${JSON.stringify(shown)}\n` : `${renderUsage(report, log.path)}${othersNote(others, log.tierFile?.file)}\n`);
  return 0;
}

/** Under the table: the routes it shows that the tier file has not, and why they are there. */
function othersNote(others: string[], file: string | undefined): string {
  if (others.length === 0 || file === undefined) return '';
  return `\n\nnot routes of ${file}: ${others.join(', ')} (another tier file writes to this usage log; usage.path gives a tier file a log of its own)`;
}

export function renderUsage(report: UsageReport, path: string): string {
  const header = [
    report.by.toUpperCase(),
    'REQUESTS',
    'FAILOVERS',
    'ERRORS',
    'TTFT p50',
    'TTFT p95',
    'PROMPT',
    'COMPLETION',
    'CACHED',
    'CACHE HIT',
    'ESTIMATED',
    'COST',
    'SAVED',
  ];
  const row = (key: string, g: UsageReport['totals']): string[] => [
    key,
    formatInt(g.requests),
    formatInt(g.failovers),
    formatInt(g.errors),
    formatMsOrDash(g.ttft_p50_ms),
    formatMsOrDash(g.ttft_p95_ms),
    formatInt(g.prompt_tokens),
    formatInt(g.completion_tokens),
    formatInt(g.cached_tokens),
    g.cache_hit_rate === null ? '-' : `${(g.cache_hit_rate * 100).toFixed(1)}%`,
    formatInt(g.estimated_requests),
    formatUsd(g.cost_usd),
    formatUsd(g.saved_usd),
  ];
  const rows = report.groups.map((g) => row(g.key, g));
  if (report.groups.length !== 1) rows.push(row('total', report.totals));
  const title = `usage ${report.since} .. ${report.until}${report.run === undefined ? '' : `, run ${report.run}`} (${path})`;
  if (report.groups.length === 0) return `${title}\nno requests in this window`;
  return `${title}\n\n${textTable(header, rows)}`;
}
