import type { ConversationRole } from '../protocols/core/conversation.js';
import type { ClientProtocol } from '../telemetry/events.js';

/**
 * The conversation view: what savers read and what their edits address. A view sits over a
 * deep copy of one request body (in any client protocol: its codec describes it) and exposes
 * only the texts a saver may rewrite and the structure it must respect; everything else in the
 * body (ids, images, cache_control, unknown fields) is never touched.
 */

/** Who says a message. `other`: an item the view does not know (kept as is, dropped only by trim_history). */
export type ViewRole = ConversationRole;

/** One text slot of the body: a message's string content, a text part/block, a tool output. */
export interface TextPart {
  readonly text: string;
  /** Where it sits in the body, e.g. `messages[3].content[0].text`. */
  readonly path: string;
  /** The call id this text is (part of) the result of; undefined for ordinary text. */
  readonly toolResult: string | undefined;
}

export interface ViewMessage {
  readonly role: ViewRole;
  /** Where it sits in the body, e.g. `messages[3]`, `input[5]`, or `system` for a top-level system prompt. */
  readonly path: string;
  /** Its text slots that are still there, in order; tool-result texts have `toolResult` set. */
  readonly parts: readonly TextPart[];
  /** Texts that count but that no saver changes: tool-call arguments. */
  readonly fixedTexts: readonly string[];
  /** Ids of the tool calls this message makes. */
  readonly calls: readonly string[];
  /** Ids of the tool calls this message answers. */
  readonly answers: readonly string[];
  /** Must stay with the message after it (a Responses reasoning item and the call it led to). */
  readonly stickyNext: boolean;
}

export interface ConversationView {
  readonly protocol: ClientProtocol;
  /** The messages still there, in order; a top-level system prompt (Anthropic `system`, Responses `instructions`) first. */
  readonly messages: readonly ViewMessage[];
}

/** What a saver asks for. Applied by the pipeline only if the saver finished in time and the result is smaller. */
export type Edit =
  | { kind: 'rewrite'; part: TextPart; text: string }
  /** Removes a system text (its block, or its message when nothing else is left in it). */
  | { kind: 'drop_part'; part: TextPart }
  /** Removes a whole non-system message. */
  | { kind: 'drop_message'; message: ViewMessage };

/** Counts tokens with the route's tokenizer (remembering counts of texts seen before). */
export type CountTokens = (text: string) => number;

/** A token saver: a pure function from a view to edits. Same view in, same edits out. */
export interface Saver {
  readonly name: string;
  run(view: ConversationView, count: CountTokens): readonly Edit[];
}
