import type { SaverChange } from './pipeline.js';

const MAX_LINES_PER_CHANGE = 6;
const MAX_CHANGES = 8;
const MAX_LINE_CHARS = 100;

/**
 * A short, readable diff of what one saver changed: per rewritten text its path and the lines
 * that differ (quoted, so whitespace shows), per dropped message or text its path and first line.
 */
export function formatChanges(changes: readonly SaverChange[]): string {
  const out: string[] = [];
  for (const change of changes.slice(0, MAX_CHANGES)) {
    if (change.kind === 'drop') {
      const first = change.texts.find((text) => text.trim() !== '') ?? '';
      out.push(`- ${change.path} (${change.role}, dropped)${first ? ` ${quote(first.split('\n')[0])}` : ''}`);
      continue;
    }
    out.push(`~ ${change.path}`);
    out.push(...lineDiff(change.before, change.after));
  }
  if (changes.length > MAX_CHANGES) out.push(`… ${changes.length - MAX_CHANGES} more changes`);
  return out.join('\n');
}

/** The lines between the common first and last lines, as - and + lines. */
function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return [...side('-', a.slice(start, endA)), ...side('+', b.slice(start, endB))];
}

function side(sign: string, lines: string[]): string[] {
  const shown = lines.slice(0, MAX_LINES_PER_CHANGE).map((line) => `  ${sign} ${quote(line)}`);
  const more = lines.length - MAX_LINES_PER_CHANGE;
  if (more > 0) shown.push(`  ${sign} … ${more} more line${more === 1 ? '' : 's'}`);
  return shown;
}

function quote(line: string): string {
  const text = JSON.stringify(line);
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS - 2)}…"` : text;
}
