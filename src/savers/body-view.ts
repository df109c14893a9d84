import type { ContentOptions, ConversationBuilder } from '../protocols/core/conversation.js';
import type { ClientProtocol } from '../telemetry/events.js';
import { isRecord } from '../util/is-record.js';
import type { ConversationView, CountTokens, Edit, TextPart, ViewMessage, ViewRole } from './types.js';
import { isOneOf } from '../protocols/core/fields.js';

/**
 * The view's machinery, whatever the protocol: the client codec describes its body's
 * conversation into it (ConversationBuilder); it keeps text slots that read and write the
 * body in place, drops that are only marks until `finish()` (so a rejected saver is undone
 * by clearing them), and the token measure of what is still there.
 */

/** What removing a text slot takes away. */
type Removal =
  | { kind: 'message' } // the slot is the message's whole content
  | { kind: 'item'; array: unknown[]; item: unknown; whenEmpty: 'message' | (() => void) }
  | { kind: 'key'; holder: Record<string, unknown>; key: string };

class Slot implements TextPart {
  dropped = false;

  constructor(
    readonly owner: Message,
    private readonly holder: Record<string, unknown>,
    private readonly key: string,
    readonly path: string,
    readonly toolResult: string | undefined,
    readonly removal: Removal,
  ) {}

  get text(): string {
    return this.holder[this.key] as string;
  }

  write(text: string): void {
    this.holder[this.key] = text;
  }
}

class Message implements ViewMessage {
  dropped = false;
  readonly slots: Slot[] = [];
  readonly fixedTexts: string[] = [];
  readonly calls: string[] = [];
  readonly answers: string[] = [];
  stickyNext = false;
  private liveParts: Slot[] | null = null;

  constructor(
    readonly view: BodyView,
    readonly role: ViewRole,
    readonly path: string,
    /** The message object in `list`; undefined for a top-level system prompt. */
    readonly raw: unknown,
    readonly list: unknown[] | undefined,
  ) {}

  get parts(): readonly TextPart[] {
    return (this.liveParts ??= this.slots.filter((slot) => !slot.dropped));
  }

  partsChanged(): void {
    this.liveParts = null;
  }
}

export class BodyView implements ConversationView, ConversationBuilder {
  private readonly all: Message[] = [];
  private live: Message[] = [];

  constructor(
    readonly protocol: ClientProtocol,
    readonly body: Record<string, unknown>,
  ) {}

  get messages(): readonly ViewMessage[] {
    return this.live;
  }

  // ─── building ──────────────────────────────────────────────────────────────

  addMessage(role: ViewRole, path: string, raw: unknown, list: unknown[] | undefined): Message {
    const message = new Message(this, role, path, raw, list);
    this.all.push(message);
    this.live.push(message);
    return message;
  }

  addContent(message: Message, holder: Record<string, unknown>, key: string, path: string, options: ContentOptions): void {
    const content = holder[key];
    const at = path ? `${path}.${key}` : key;
    if (typeof content === 'string') {
      const removal: Removal = message.raw === holder ? { kind: 'message' } : { kind: 'key', holder, key };
      message.slots.push(new Slot(message, holder, key, at, options.toolResult, removal));
      return;
    }
    if (Array.isArray(content)) content.forEach((_, index) => this.addContentItem(message, content, index, `${at}[${index}]`, options));
  }

  addContentItem(message: Message, array: unknown[], index: number, path: string, options: ContentOptions): void {
    const item = array[index];
    if (!isRecord(item) || typeof item.text !== 'string' || (options.textTypes !== undefined && !isOneOf(options.textTypes, item.type))) return;
    const removal: Removal = { kind: 'item', array, item, whenEmpty: options.whenEmpty ?? 'message' };
    message.slots.push(new Slot(message, item, 'text', `${path}.text`, options.toolResult, removal));
  }

  // ─── editing (by the pipeline) ─────────────────────────────────────────────

  /** Applies a saver's edits; returns what undoes them. Throws on an edit this view cannot honour (nothing is left applied). */
  apply(edits: readonly Edit[]): () => void {
    const undo: Array<() => void> = [];
    const undoAll = (): void => {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]();
      this.refresh();
    };
    try {
      for (const edit of edits) undo.push(this.applyOne(edit));
    } catch (error) {
      undoAll();
      throw error;
    }
    this.refresh();
    return undoAll;
  }

  private applyOne(edit: Edit): () => void {
    if (edit.kind === 'drop_message') {
      const message = this.ownMessage(edit.message);
      if (message.role === 'system') throw new Error(`a saver may not drop a system message (${message.path})`);
      message.dropped = true;
      return () => (message.dropped = false);
    }
    const slot = this.ownSlot(edit.part);
    if (edit.kind === 'drop_part') {
      if (slot.owner.role !== 'system') throw new Error(`a saver may drop only system texts (${slot.path})`);
      slot.dropped = true;
      slot.owner.partsChanged();
      return () => {
        slot.dropped = false;
        slot.owner.partsChanged();
      };
    }
    if (typeof edit.text !== 'string') throw new Error(`a rewrite of ${slot.path} is not a string`);
    const before = slot.text;
    slot.write(edit.text);
    return () => slot.write(before);
  }

  private ownSlot(part: TextPart): Slot {
    if (!(part instanceof Slot) || part.owner.view !== this || part.dropped || part.owner.dropped) {
      throw new Error(`an edit names a text that is not in this request (${String(part?.path)})`);
    }
    return part;
  }

  private ownMessage(message: ViewMessage): Message {
    if (!(message instanceof Message) || message.view !== this || message.dropped) {
      throw new Error(`an edit names a message that is not in this request (${String(message?.path)})`);
    }
    return message;
  }

  private refresh(): void {
    this.live = this.all.filter((message) => !message.dropped);
  }

  // ─── measuring and finishing ───────────────────────────────────────────────

  /** Tokens of what is still there: every text slot and every fixed text. */
  measure(count: CountTokens): number {
    let tokens = 0;
    for (const message of this.live) tokens += messageTokens(message, count);
    return tokens;
  }

  /** Carries the drops out on the body and returns it. The view must not be used afterwards. */
  finish(): Record<string, unknown> {
    const partsOut = new Map<unknown[], { items: Set<unknown>; message: Message; whenEmpty: 'message' | (() => void) }>();
    for (const message of this.all) {
      for (const slot of message.slots) {
        if (!slot.dropped) continue;
        const removal = slot.removal;
        if (removal.kind === 'message') message.dropped = true;
        else if (removal.kind === 'key') delete removal.holder[removal.key];
        else {
          let out = partsOut.get(removal.array);
          if (!out) partsOut.set(removal.array, (out = { items: new Set(), message, whenEmpty: removal.whenEmpty }));
          out.items.add(removal.item);
        }
      }
    }
    for (const [array, { items, message, whenEmpty }] of partsOut) {
      spliceOut(array, items);
      if (array.length > 0) continue;
      if (whenEmpty === 'message') message.dropped = true;
      else whenEmpty();
    }
    const messagesOut = new Map<unknown[], Set<unknown>>();
    for (const message of this.all) {
      if (!message.dropped || !message.list) continue;
      let items = messagesOut.get(message.list);
      if (!items) messagesOut.set(message.list, (items = new Set()));
      items.add(message.raw);
    }
    for (const [array, items] of messagesOut) spliceOut(array, items);
    return this.body;
  }
}

/** Tokens of one message: its text slots and fixed texts. */
export function messageTokens(message: ViewMessage, count: CountTokens): number {
  let tokens = 0;
  for (const part of message.parts) tokens += count(part.text);
  for (const text of message.fixedTexts) tokens += count(text);
  return tokens;
}

function spliceOut(array: unknown[], items: Set<unknown>): void {
  let write = 0;
  for (const item of array) if (!items.has(item)) array[write++] = item;
  array.length = write;
}
