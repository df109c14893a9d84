/**
 * Fenced code blocks (``` or ~~~, three or more, at any indentation), which no saver may change.
 * A fence closes on a line of the same character, at least as long, and nothing else; an unclosed
 * fence runs to the end of the text.
 */

/** [start, end) of each fenced block, from the start of its opening line to the end of its closing line. */
export function fenceSpans(text: string): Array<[number, number]> {
  if (!text.includes('```') && !text.includes('~~~')) return [];
  const spans: Array<[number, number]> = [];
  let open: { char: string; length: number; start: number } | null = null;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    const fence = /^[ \t]*(`{3,}|~{3,})(.*?)\r?$/.exec(line);
    if (open === null) {
      // A backtick fence's info string may not contain a backtick (```inline``` is not a fence).
      if (fence && !(fence[1][0] === '`' && fence[2].includes('`'))) {
        open = { char: fence[1][0], length: fence[1].length, start: lineStart };
      }
    } else if (fence && fence[1][0] === open.char && fence[1].length >= open.length && fence[2].trim() === '') {
      spans.push([open.start, lineEnd]);
      open = null;
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  if (open !== null) spans.push([open.start, text.length]);
  return spans;
}

/** The text with `change` applied to every stretch outside fenced blocks; the blocks are kept byte for byte. */
export function outsideFences(text: string, change: (prose: string, place: { first: boolean; last: boolean }) => string): string {
  const spans = fenceSpans(text);
  if (spans.length === 0) return change(text, { first: true, last: true });
  let out = '';
  let at = 0;
  for (const [start, end] of spans) {
    out += change(text.slice(at, start), { first: at === 0, last: false }) + text.slice(start, end);
    at = end;
  }
  return out + change(text.slice(at), { first: false, last: true });
}

/** The fenced blocks of a text, in order (for tests and diffs). */
export function fencedBlocks(text: string): string[] {
  return fenceSpans(text).map(([start, end]) => text.slice(start, end));
}
