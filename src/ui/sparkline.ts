const BARS = '▁▂▃▄▅▆▇█';

/** Values as bars scaled from 0 to the largest, so heights compare as ratios. */
export function sparkline(values: readonly number[]): string {
  if (values.length === 0) return '';
  const max = Math.max(...values);
  if (max <= 0) return BARS[0].repeat(values.length);
  let out = '';
  for (const value of values) {
    const level = Math.round((Math.max(0, value) / max) * (BARS.length - 1));
    out += BARS[level];
  }
  return out;
}
