// Small statistics helpers: nearest-rank percentiles and medians over plain arrays of numbers.

/** The p-th percentile (0..100) of `values` by nearest rank; NaN for an empty list. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return Number.NaN;
  const sorted = finite.sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function sum(values) {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** p50 and p99 of one sample. */
export function summarize(values) {
  return { n: values.length, p50: percentile(values, 50), p99: percentile(values, 99) };
}

/** Medians across rounds of each numeric field of the per-round summaries. */
export function medianOfRounds(rounds) {
  const out = {};
  const keys = new Set(rounds.flatMap((r) => Object.keys(r)));
  for (const key of keys) {
    const values = rounds.map((r) => r[key]).filter((v) => typeof v === 'number');
    if (values.length > 0) out[key] = median(values);
  }
  return out;
}
