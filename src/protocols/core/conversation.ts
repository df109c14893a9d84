/**
 * A request body's conversation as token savers see it, described by the client codec that
 * knows the body's protocol: each message with its role and its text slots (the texts a saver
 * may rewrite, addressed in place), the tool calls it makes and answers, and the texts that
 * count but never change. The codec only describes; the savers' view (src/savers/body-view.ts)
 * builds itself from the description and does the editing.
 */

/** Who says a message. `other`: an item the view does not know (kept as is, dropped only by trim_history). */
export type ConversationRole = 'system' | 'user' | 'assistant' | 'tool' | 'other';

/** One message as the builder keeps it: what the codec adds to it besides its text slots. */
export interface ConversationEntry {
  /** Texts that count but that no saver changes: tool-call arguments. */
  readonly fixedTexts: string[];
  /** Ids of the tool calls this message makes. */
  readonly calls: string[];
  /** Ids of the tool calls this message answers. */
  readonly answers: string[];
  /** Must stay with the message after it (a Responses reasoning item and the call it led to). */
  stickyNext: boolean;
}

export interface ContentOptions {
  /** The call id when the text is a tool result. */
  toolResult?: string;
  /** Content-part types whose `text` is a slot (others are left alone); absent: the codec chose the part (Gemini's parts name no type). */
  textTypes?: ReadonlySet<string>;
  /** Dropping the last part of an array: drop the message, or run this. */
  whenEmpty?: 'message' | (() => void);
}

export interface ConversationBuilder {
  /** A message at `path` (e.g. `messages[3]`): `raw` is its object in `list`, both undefined for a top-level system prompt. */
  addMessage(role: ConversationRole, path: string, raw: unknown, list: unknown[] | undefined): ConversationEntry;
  /** The text slots of `holder[key]`: one if it is a string, one per text part if it is an array. */
  addContent(message: ConversationEntry, holder: Record<string, unknown>, key: string, path: string, options: ContentOptions): void;
  /** The text slot of `array[index]` when it is a text part of one of `options.textTypes`. */
  addContentItem(message: ConversationEntry, array: unknown[], index: number, path: string, options: ContentOptions): void;
}

/** How sure a codec is that a body is written in its protocol: `own`, it has what only this protocol writes; `fits`, it could be. */
export type Recognition = 'own' | 'fits' | null;

/**
 * Whether a list of content parts holds a part of one of `types`, looking into each part's own
 * `content` and `output` (a tool result's parts). Content nests a few levels (message →
 * tool_result → content → image); a hostile body's depth is already bounded by the JSON reader,
 * this bound keeps the walk short anyway. Plain loops: an 80 KB agent history is a few hundred
 * parts, walked in a few µs.
 */
export function holdsPartOf(list: unknown, types: ReadonlySet<string>, depth = 0): boolean {
  if (!Array.isArray(list) || depth > MAX_DEPTH) return false;
  for (let i = 0; i < list.length; i++) {
    const part: unknown = list[i];
    if (part === null || typeof part !== 'object') continue;
    const { type, content, output } = part as { type?: unknown; content?: unknown; output?: unknown };
    if (typeof type === 'string' && types.has(type)) return true;
    // A message's or a tool result's own parts (a string content has none).
    if (typeof content === 'object' && holdsPartOf(content, types, depth + 1)) return true;
    if (typeof output === 'object' && holdsPartOf(output, types, depth + 1)) return true;
  }
  return false;
}

const MAX_DEPTH = 8;
