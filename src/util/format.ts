/** Small text formatters shared by the dashboard, `usage` and `incidents`: durations, times, counts, cells. */

/** `812ms`, `2.5s`, `12s`: short and steady in width. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.round(ms / 1000)}s`;
}

/** `45s`, `3m12s`, `2h05m`, `3d04h`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${pad2(s % 60)}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${pad2(m % 60)}m`;
  return `${Math.floor(h / 24)}d${pad2(h % 24)}h`;
}

/** Local wall-clock time, `HH:MM:SS`. */
export function formatClock(at: number): string {
  const d = new Date(at);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** `0.0`, `2.4`, `37`: requests per second. */
export function formatRate(perSecond: number): string {
  return perSecond >= 10 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

/** Exactly `width` characters: padded, or cut with an ellipsis. */
export function cell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  if (width <= 0) return '';
  if (text.length > width) return width === 1 ? '…' : `${text.slice(0, width - 1)}…`;
  return align === 'right' ? text.padStart(width) : text.padEnd(width);
}

/** At most `width` characters, cut with an ellipsis. */
export function clip(text: string, width: number): string {
  return text.length > width ? cell(text, width) : text;
}

/** `42`, `9999`, `12.3k`, `123k`, `1.2M`: at most five characters. */
export function formatCount(n: number): string {
  if (n < 10_000) return String(n);
  if (n < 100_000) return `${(n / 1000).toFixed(1)}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `an openai`, `an anthropic`, `a groq`: the article English puts before a lower-case name (by its first letter). */
export function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? 'an' : 'a'} ${word}`;
}
