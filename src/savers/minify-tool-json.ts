import type { Edit, Saver } from './types.js';

/**
 * `minify_tool_json`: a tool result whose whole text is a JSON object or array is re-written
 * without insignificant whitespace. Only whitespace between tokens goes: numbers, escapes,
 * key order and duplicate keys stay exactly as they were (no parse-and-stringify round trip).
 */
export function minifyToolJsonSaver(): Saver {
  return {
    name: 'minify_tool_json',
    run(view) {
      const edits: Edit[] = [];
      for (const message of view.messages) {
        for (const part of message.parts) {
          if (part.toolResult === undefined) continue;
          const text = minifyJson(part.text);
          if (text !== null && text.length < part.text.length) edits.push({ kind: 'rewrite', part, text });
        }
      }
      return edits;
    },
  };
}

/** The JSON object or array in `text` without whitespace between tokens; null when `text` is not one. */
export function minifyJson(text: string): string | null {
  const json = text.trim();
  const first = json[0];
  if (first !== '{' && first !== '[') return null;
  try {
    JSON.parse(json);
  } catch {
    return null;
  }
  let out = '';
  let from = 0; // start of the run of significant characters being copied
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      out += json.slice(from, i);
      from = i + 1;
    }
  }
  return out + json.slice(from);
}
