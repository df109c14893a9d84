/** A plain text table for the terminal: columns whose every cell is a number (or `-`) are right-aligned, the others left-aligned. */
export function textTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const numeric = header.map((_, column) => rows.length > 0 && rows.every((row) => NUMERIC.test(row[column] ?? '')));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const NUMERIC = /^(-|\$?[\d,.]+( ms)?)$/;

/** `$0`, `$0.000042`, `$0.002051`, `$12.3457`, `$1234.57`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 1) return `$${usd.toFixed(6)}`;
  if (usd < 100) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

/** `1,234,567`. */
export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `412 ms`, `-` when there is nothing. */
export function formatMsOrDash(ms: number | null): string {
  return ms === null ? '-' : `${Math.round(ms)} ms`;
}
