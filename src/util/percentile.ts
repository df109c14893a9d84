/**
 * The p-th percentile (0 to 100) of ascending `sorted` values, by nearest rank: the smallest
 * value with at least p% of the values at or below it. It is always a value that was
 * observed, so a TTFT p99 is one some request really had, and "p99 above the threshold" says
 * that more than 1% of the requests were slower. With few values the top percentiles are the
 * maximum. NaN for no values.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}
