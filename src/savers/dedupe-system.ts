import { outsideFences } from './fences.js';
import type { Edit, Saver } from './types.js';

/** Paragraphs shorter than this are headings and list bullets that legitimately repeat. */
const MIN_PARAGRAPH_CHARS = 40;

/**
 * `dedupe_system`: system content said twice is said once. A system text identical to an
 * earlier one is removed; in the others, a paragraph (blank-line separated, outside fenced
 * code blocks, 40+ characters) already said earlier in the system content is removed. The
 * first occurrence always stays, so the start of the prompt is never moved.
 */
export function dedupeSystemSaver(): Saver {
  return {
    name: 'dedupe_system',
    run(view) {
      const edits: Edit[] = [];
      const texts = new Set<string>();
      const paragraphs = new Set<string>();
      for (const message of view.messages) {
        if (message.role !== 'system') continue;
        for (const part of message.parts) {
          const whole = part.text.trim();
          if (whole === '') continue;
          if (texts.has(whole)) {
            edits.push({ kind: 'drop_part', part });
            continue;
          }
          texts.add(whole);
          const text = dropRepeatedParagraphs(part.text, paragraphs);
          if (text === part.text) continue;
          edits.push(text.trim() === '' ? { kind: 'drop_part', part } : { kind: 'rewrite', part, text });
        }
      }
      return edits;
    },
  };
}

const PARAGRAPH_BREAK = /(\n[ \t]*\n\s*)/;

/** `text` without the paragraphs already in `seen`; the new ones are added to it. */
function dropRepeatedParagraphs(text: string, seen: Set<string>): string {
  return outsideFences(text, (prose) => {
    const pieces = prose.split(PARAGRAPH_BREAK); // paragraph, break, paragraph, ..., paragraph
    let out = '';
    let removed = false;
    for (let i = 0; i < pieces.length; i += 2) {
      const paragraph = pieces[i];
      const separator = pieces[i + 1] ?? '';
      const key = paragraph.trim();
      if (key.length >= MIN_PARAGRAPH_CHARS) {
        if (seen.has(key)) {
          removed = true;
          continue; // with its separator
        }
        seen.add(key);
      }
      out += paragraph + separator;
    }
    return removed ? out : prose;
  });
}
