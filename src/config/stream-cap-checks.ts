import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';
import { DEFAULT_TIMEOUTS } from './tier-schema.js';

/**
 * What the schema cannot say about `timeouts.stream_max_ms`: the cap counts from the attempt's
 * start, so one below the tier's ttft_ms (its own or its route's) would end every stream at or
 * before its first token. Reported once where it is set (a route's cap shared by its tiers, once).
 */
export function streamCapProblems(data: Record<string, unknown>, report: Reporter): ConfigProblem[] {
  if (!isRecord(data.routes)) return [];
  const problems: ConfigProblem[] = [];
  for (const [routeName, route] of Object.entries(data.routes)) {
    if (!isRecord(route) || !Array.isArray(route.tiers)) continue;
    const shared = isRecord(route.timeouts) ? route.timeouts : {};
    const reported = new Set<string>();
    route.tiers.forEach((tier: unknown, index: number) => {
      const own = isRecord(tier) && isRecord(tier.timeouts) ? tier.timeouts : {};
      const cap = own.stream_max_ms ?? shared.stream_max_ms;
      const ttft = own.ttft_ms ?? shared.ttft_ms ?? DEFAULT_TIMEOUTS.ttft_ms;
      // A value that is not a whole number of ms is the schema's to report.
      if (!Number.isInteger(cap) || !Number.isInteger(ttft) || (cap as number) <= 0 || (cap as number) >= (ttft as number)) return;
      const path =
        own.stream_max_ms !== undefined
          ? ['routes', routeName, 'tiers', index, 'timeouts', 'stream_max_ms']
          : ['routes', routeName, 'timeouts', 'stream_max_ms'];
      const key = path.join('/');
      if (reported.has(key)) return;
      reported.add(key);
      problems.push(
        report.at(
          'value',
          path,
          `stream_max_ms ${cap} is below ttft_ms ${ttft}: it counts from the attempt's start, so streams would end at their first token; use 0 (no cap) or at least ttft_ms`,
        ),
      );
    });
  }
  return problems;
}
