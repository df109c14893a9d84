import type {
  FitDiscovered,
  AttemptRecord,
  ConfigReloaded,
  HealthChecked,
  ProviderOutput,
  RolledBack,
  StateDegraded,
  StateRecovered,
  TierStateChanged,
  TraceExportFailing,
  TraceExportRecovered,
  UnknownEndpoint,
  UsageDegraded,
  UsageRecovered,
  WeightChanged,
} from '../../telemetry/events.js';
import { formatMs } from '../../util/format.js';

export type LogLevel = 'info' | 'good' | 'warn' | 'bad';

export interface LogLine {
  at: number;
  level: LogLevel;
  text: string;
}

type Line = Omit<LogLine, 'at'>;

/** Problems listed per rejected reload; the rest are counted (`llm-route validate` lists them all). */
const MAX_PROBLEM_LINES = 5;

/** The log lines a reload leaves: one, plus each problem on its own line when it was rejected. */
export function reloadLines(event: ConfigReloaded): Line[] {
  if (event.ok) {
    const routes = event.routes === undefined ? '' : `: ${event.routes} route${event.routes === 1 ? '' : 's'}`;
    return [{ level: 'good', text: `reloaded ${event.file}${routes}` }];
  }
  const problems = (event.problems ?? []).filter((p) => p.trim() !== '');
  const lines: Line[] = [
    { level: 'bad', text: `reload rejected, still running the previous config (${problems.length} problem${problems.length === 1 ? '' : 's'})` },
    ...problems.slice(0, MAX_PROBLEM_LINES).map((problem): Line => ({ level: 'bad', text: `  ${problem}` })),
  ];
  if (problems.length > MAX_PROBLEM_LINES) {
    lines.push({ level: 'bad', text: `  … ${problems.length - MAX_PROBLEM_LINES} more: run llm-route validate -c ${event.file}` });
  }
  return lines;
}

/** A rollback with the numbers that tripped it; `weightBefore` null: the tier file's weight. */
export function rollbackLine(event: RolledBack, weightBefore: number | null): Line {
  const what =
    event.reason === 'ttft_p99'
      ? `ttft p99 ${formatMs(event.observed)} > ${formatMs(event.threshold)}`
      : `error rate ${percent(event.observed)} > ${percent(event.threshold)}`;
  const weight = weightBefore === null ? 'weight → 0' : `weight ${weightBefore} → 0`;
  return { level: 'bad', text: `rollback ${event.route}/${event.tier}: ${what} over ${event.windowS}s (${event.requests} requests), ${weight}` };
}

export function weightLine(event: WeightChanged, previousWeight: number): Line {
  const tier = `${event.route}/${event.tier}`;
  const change = previousWeight === event.weight ? `weight ${event.weight}` : `weight ${previousWeight} → ${event.weight}`;
  const why = event.reason ? `: ${event.reason}` : '';
  switch (event.source) {
    case 'admin':
      return { level: 'warn', text: `${tier} ${change} (${event.weight === 0 ? 'killed' : 'admin override'}${why})` };
    case 'alert':
      return { level: event.weight === 0 ? 'warn' : 'good', text: `${tier} ${change} (${event.reason ?? 'alert'})` };
    case 'rollback':
      return { level: 'bad', text: `${tier} ${change} (rolled back${why})` };
    case 'expired':
      return { level: 'info', text: `${tier} ${event.reason ?? 'override expired'}, ${change}` };
    case 'cleared':
      return { level: 'good', text: `${tier} override cleared, ${change}` };
    case 'reload':
      return { level: 'info', text: `${tier} ${change} (tier file)` };
  }
}

export function tierStateLine(event: TierStateChanged, now: number): Line {
  const tier = `${event.route}/${event.tier}`;
  const why = event.reason ? `: ${event.reason}` : '';
  if (event.to === 'healthy') return { level: 'good', text: `${tier} healthy again${why}` };
  if (event.to === 'degraded') return { level: 'warn', text: `${tier} degraded${why}` };
  const retry = event.retryAt === undefined ? '' : `, next try in ${formatMs(Math.max(0, event.retryAt - now))}`;
  return { level: 'bad', text: `${tier} down${why}${retry}` };
}

/** A probe or warm-up result; routine checks stay quiet (their effect shows as tier states). */
export function healthCheckLine(event: HealthChecked): Line | null {
  if (event.kind === 'check') return null;
  const tier = `${event.route}/${event.tier}`;
  // A server that was loading its model: how long the warm-up waited for it.
  const waited = event.waitedMs ? formatMs(event.waitedMs) : null;
  if (event.loading) {
    return { level: 'warn', text: `${event.kind} ${tier}: ${event.error ?? 'still loading'}${waited ? `, waited ${waited} so far` : ''}` };
  }
  if (event.ok) {
    const ttft = event.ttftMs === null ? '' : `, ttft ${formatMs(event.ttftMs)}`;
    const note = event.note ? ` (${event.note})` : '';
    return { level: 'good', text: `${event.kind} ${tier} ok${ttft}${waited ? ` after ${waited} of loading` : ''}${note}` };
  }
  let why = event.error ?? 'failed';
  if (!event.reachable) why = `unreachable${event.error ? `: ${event.error}` : ''}`;
  else if (event.modelPresent === false) why = 'model not present';
  return { level: 'bad', text: `${event.kind} ${tier} failed: ${why}` };
}

/** What discovery learned of a tier's window (or that it learned nothing, and why). */
export function fitLine(event: FitDiscovered): Line {
  const tier = `${event.route}/${event.tier}`;
  if (event.error) return { level: 'warn', text: `${tier}: context unknown (${event.error}); no fit check` };
  const window = event.context === null ? 'context unknown' : `context ${event.context} (${event.context_source})`;
  const inputs = [event.vision === false ? 'no images' : null, event.tools === false ? 'no tools' : null].filter(Boolean).join(', ');
  return { level: 'info', text: `${tier}: ${window}${inputs ? `, ${inputs}` : ''}` };
}

/** A started provider's own output; many servers log everything to stderr, so it is not a warning. */
export function providerOutputLine(event: ProviderOutput): Line {
  return { level: 'info', text: `[${event.provider}] ${event.line}` };
}

/** The shared state went away or came back. */
export function stateLine(event: StateDegraded | StateRecovered): Line {
  if (event.type === 'state_degraded') {
    return { level: 'bad', text: `shared state (Redis ${event.target}) unreachable: ${event.error}; serving on local state, limits and budgets per instance` };
  }
  return { level: 'good', text: `shared state (Redis ${event.target}) back after ${formatMs(event.downMs)}; rejoined` };
}

/** The usage log became unusable, or usable again. */
export function usageLine(event: UsageDegraded | UsageRecovered): Line {
  if (event.type === 'usage_degraded') {
    return { level: 'bad', text: `usage log ${event.path}: ${event.error}; requests are served, their rows dropped until it reopens` };
  }
  return { level: 'good', text: `usage log ${event.path} usable again (${event.dropped} row${event.dropped === 1 ? '' : 's'} dropped meanwhile)` };
}

/** Spans could not be exported, or are exported again. */
export function traceExportLine(event: TraceExportFailing | TraceExportRecovered): Line {
  if (event.type === 'trace_export_failing') {
    return { level: 'bad', text: `traces to ${event.endpoint}: ${event.error}; requests are served, spans dropped until it answers` };
  }
  return { level: 'good', text: `traces to ${event.endpoint} exported again (${event.dropped} span${event.dropped === 1 ? '' : 's'} dropped meanwhile)` };
}

/** A tier skipped by llm-route's own limit or budget; `more` skips of it since its last line. */
export function limitSkipLine(route: string, record: AttemptRecord, more: number): Line {
  const also = more > 0 ? ` (+${more} more since the last line)` : '';
  const what = record.outcome === 'budget' ? 'budget' : 'rate limited';
  return { level: 'warn', text: `${route}/${record.tier} skipped, ${what}: ${record.message ?? record.outcome}${also}` };
}

function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

/** A client asked for a path llm-route does not serve: which client, so a protocol it speaks and llm-route does not is seen here. */
export function unknownEndpointLine(event: UnknownEndpoint): Line {
  const client = event.userAgent ? ` from ${event.userAgent}` : '';
  return { level: 'warn', text: `${event.method} ${event.path}${client}: no such endpoint, answered 404` };
}
