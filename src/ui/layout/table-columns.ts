/** The route table's columns, and which of them fit a terminal of a given width. */

export type ColumnKey =
  | 'marker'
  | 'tier'
  | 'model'
  | 'state'
  | 'weight'
  | 'live'
  | 'requests'
  | 'errors'
  | 'failovers'
  | 'p50'
  | 'p95'
  | 'p99'
  | 'cache'
  | 'trend'
  | 'context';

export interface Column {
  key: ColumnKey;
  title: string;
  /** Characters of content; columns are joined by `gapAfter` spaces. */
  width: number;
  align: 'left' | 'right';
  /** A count: next to another count one space separates them well enough. */
  count?: boolean;
}

/** The widest content of the columns whose width follows the data. */
export interface ContentWidths {
  tier: number;
  model: number;
  weight: number;
}

export const GAP = 2;
/** How many sparkline bars the trend column holds. */
export const TREND_BARS = 12;

/** Dropped first to last as the terminal narrows. */
const DROP_ORDER: ColumnKey[] = ['context', 'trend', 'cache', 'model', 'p95'];

function allColumns(content: ContentWidths): Column[] {
  const column = (key: ColumnKey, title: string, width: number, align: Column['align']): Column => ({
    key,
    title,
    width: Math.max(width, title.length),
    align,
  });
  return [
    { key: 'marker', title: '', width: 2, align: 'left' },
    column('tier', 'tier', Math.min(content.tier, 16), 'left'),
    column('model', 'provider/model', Math.min(content.model, 32), 'left'),
    column('state', 'state', 'degraded'.length, 'left'),
    column('weight', 'weight', Math.min(Math.max(content.weight, '0 (killed)'.length), 24), 'left'),
    { ...column('live', 'live', 4, 'right'), count: true },
    { ...column('requests', 'reqs', 5, 'right'), count: true },
    { ...column('errors', 'errs', 5, 'right'), count: true },
    { ...column('failovers', 'f/o', 4, 'right'), count: true },
    column('p50', 'p50', 5, 'right'),
    column('p95', 'p95', 5, 'right'),
    column('p99', 'p99', 5, 'right'),
    // The prompt-cache hit rate its server reports (llama.cpp, vLLM, Anthropic, recent Ollama); – none reported.
    column('cache', 'cache', 5, 'right'),
    column('trend', 'ttft trend', TREND_BARS, 'left'),
    // The window the fit check uses (src/fit/): discovered, configured or learned; – unknown.
    column('context', 'ctx', 5, 'right'),
  ];
}

/** The columns to show at `terminalWidth`: the context goes first, then trend, cache, provider/model, p95. */
export function chooseColumns(terminalWidth: number, content: ContentWidths): Column[] {
  let columns = allColumns(content);
  for (const key of DROP_ORDER) {
    if (totalWidth(columns) <= terminalWidth) break;
    columns = columns.filter((c) => c.key !== key);
  }
  return columns;
}

/** Spaces after a column: none after the selection marker (it carries its own) and the last. */
export function gapAfter(columns: readonly Column[], index: number): number {
  const column = columns[index];
  const next = columns[index + 1];
  if (column.key === 'marker' || !next) return 0;
  return column.count && next.count ? 1 : GAP;
}

export function totalWidth(columns: readonly Column[]): number {
  return columns.reduce((sum, c, i) => sum + c.width + gapAfter(columns, i), 0);
}
