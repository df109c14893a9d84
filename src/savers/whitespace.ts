import { outsideFences } from './fences.js';
import type { Edit, Saver } from './types.js';

export interface WhitespaceOptions {
  /** Also tidy tool outputs (off by default: agents edit files by exact match of what a tool returned). */
  tool_results: boolean;
}

/**
 * `whitespace`: outside fenced code blocks, CRLF becomes LF, spaces and tabs at line ends go,
 * two or more blank lines become one, runs of spaces between words become one space, and the
 * text loses its leading blank lines and trailing whitespace. Indentation is kept.
 */
export function whitespaceSaver(options: WhitespaceOptions): Saver {
  return {
    name: 'whitespace',
    run(view) {
      const edits: Edit[] = [];
      for (const message of view.messages) {
        for (const part of message.parts) {
          if (part.toolResult !== undefined && !options.tool_results) continue;
          const text = collapseWhitespace(part.text);
          if (text !== part.text) edits.push({ kind: 'rewrite', part, text });
        }
      }
      return edits;
    },
  };
}

/** The text with its whitespace collapsed outside fenced code blocks; never empties a non-empty text. */
export function collapseWhitespace(text: string): string {
  const collapsed = outsideFences(text, (prose, { first, last }) => {
    let out = prose.includes('\r') ? prose.replace(/\r\n/g, '\n') : prose;
    out = out
      .replace(/[ \t]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .replace(/(?<=\S) {2,}(?=\S)/g, ' ');
    if (first) out = out.replace(/^\n+/, '');
    if (last) out = out.replace(/\s+$/, '');
    return out;
  });
  return collapsed === '' ? text : collapsed;
}
