/** A plain text table for the terminal: the first column left-aligned, the others right-aligned. */
export function textTable(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `$0`, `$0.000042`, `$0.0123`, `$12.35`. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
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
