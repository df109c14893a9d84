import type { StreamPart } from '../core/stream-part.js';
import { EVENT_HELD, EVENT_REWRITTEN } from '../core/event-facts.js';
import { FormClose, formatOf, mayHoldOpener, mayOpen, openerTailAt, tagOpenerAt, type ToolTextFormat } from './forms.js';
import { recoverCalls, type ToolSchemas } from './recover.js';
import { segmentParts } from './segment-parts.js';

/** What became of one form read after commit: its calls delivered, or its text as written. */
export interface LaterForm {
  format: ToolTextFormat;
  calls: number;
  repaired: boolean;
  asText: boolean;
}

/**
 * The text of an answer that has committed, read for tool calls written as text that come
 * later: after text the client already has ("Let me check.\n<tool_call>…"), or after a call.
 * Text goes on as it comes; a tail that may still grow into a tagged opener (`…<tool_`) waits
 * for the next piece; a form is held from its opener to its close, then replaced by its calls,
 * or given back as the text it was when it holds none the client can run (the stream has
 * committed: there is no failing over). Whitespace after a call waits too: it is dropped before
 * the next call and at the end, as a native answer has none between its calls.
 */
export class CommittedText {
  /** A tail of the text that may begin an opener, held back until the next piece decides. */
  private tail = '';
  /** Whitespace after a call, held back. */
  private space = '';
  /** The form held, from its opener on; null when none is. */
  private form: string | null = null;
  private format: ToolTextFormat | null = null;
  private close: FormClose | null = null;
  /** The last thing delivered was a call. */
  afterCall = false;
  /** An opener was found since `rewritten` was last cleared: the parts no longer say what the upstream's bytes do. */
  private rewritten = false;
  /** Reading stopped: a native call came (the answer is not text), or a choice other than 0. */
  stopped = false;
  /** The id of the text block read last (text delivered at the end goes in it). */
  lastId = 'text-0';
  /** The flags of the event `read` last rewrote: EVENT_REWRITTEN (a form opened or was converted), EVENT_HELD (a tail waits). */
  flags = 0;

  constructor(
    private readonly tools: ToolSchemas,
    private readonly idPrefix: string,
    private readonly delivered: (form: LaterForm) => void,
    /** The answer's finish as it goes out (a turn that made calls ends in them). */
    private readonly finished: (finish: StreamPart) => StreamPart,
  ) {}

  /**
   * One event's parts with their text read for forms; null when they go on untouched: nothing
   * is held and no text delta holds a `<` or `[` (the one look each later delta pays), unless
   * `look` (text that may hold an opener across its deltas). `ended`: the stream's terminator.
   */
  read(parts: readonly StreamPart[], ended: boolean, look: boolean): StreamPart[] | null {
    if (!look && !this.holding && !this.afterCall) {
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        if (part.type === 'text-delta') look ||= !part.choice && mayHoldOpener(part.delta);
        else if (part.type === 'tool-input-start' || ofOtherChoice(part)) {
          this.stopped = true;
          return null;
        }
      }
      if (!look) return null;
    }
    const out: StreamPart[] = [];
    let finished = false;
    this.rewritten = false;
    for (const part of parts) {
      if (ofOtherChoice(part)) {
        this.stopped = true;
        out.push(part);
        continue;
      }
      switch (part.type) {
        case 'text-delta':
          this.lastId = part.id;
          this.text(part.delta, part.id, out);
          break;
        case 'text-end':
          this.flush(part.id, out);
          out.push(part);
          break;
        case 'finish':
          this.end(this.lastId, out);
          out.push(this.finished(part));
          finished = true;
          break;
        case 'tool-input-start':
          // A native call: the answer is not text; what is held goes out first, and nothing is read after.
          this.end(this.lastId, out);
          this.stopped = true;
          out.push(part);
          break;
        default:
          out.push(part);
      }
    }
    if (!finished && ended) this.end(this.lastId, out);
    this.flags = this.rewritten ? EVENT_REWRITTEN : this.undecided ? EVENT_HELD : 0;
    return out;
  }

  /** Text is held back (a possible opener's tail, or a form). */
  get holding(): boolean {
    return this.tail !== '' || this.form !== null;
  }

  /** Characters of the form held (0: none). */
  get formChars(): number {
    return this.form?.length ?? 0;
  }

  /** Only a possible opener's tail is held: nothing is decided yet. */
  get undecided(): boolean {
    return this.tail !== '' && this.form === null;
  }

  /** Reads one text delta of the answer, appending what the client gets for it to `out`. */
  text(delta: string, id: string, out: StreamPart[]): void {
    let text = this.tail + delta;
    this.tail = '';
    while (text !== '') {
      if (this.form !== null) {
        this.form += text;
        const end = this.closeAt(text);
        if (end < 0) return;
        const whole = this.form.slice(0, end);
        text = this.form.slice(end);
        this.form = null;
        this.deliver(whole, id, out);
        continue;
      }
      const at = tagOpenerAt(text);
      if (at >= 0) {
        this.plain(text.slice(0, at), id, out, true);
        this.form = '';
        this.format = null;
        this.close = null;
        this.rewritten = true;
        text = text.slice(at);
        continue;
      }
      const tail = openerTailAt(text);
      this.plain(tail < 0 ? text : text.slice(0, tail), id, out, false);
      if (tail >= 0) this.tail = text.slice(tail);
      return;
    }
  }

  /** A text block ended: a held tail cannot grow into an opener across it, and goes out as text. */
  flush(id: string, out: StreamPart[]): void {
    if (this.tail === '') return;
    const tail = this.tail;
    this.tail = '';
    this.plain(tail, id, out, false);
  }

  /** The answer ended: a form left open is read as closed; what else is held goes out, but whitespace after a call. */
  end(id: string, out: StreamPart[]): void {
    if (this.form !== null) {
      const whole = this.form;
      this.form = null;
      this.deliver(whole, id, out);
    }
    this.flush(id, out);
    this.space = '';
  }

  /** Where the held form closes once `piece` is added to it (-1: open), its format read once its first marker's content began. */
  private closeAt(piece: string): number {
    const form = this.form as string;
    if (this.close === null) {
      this.format = formatOf(form);
      if (this.format === null) return -1;
      this.close = new FormClose(this.format, form);
      return this.close.push(form);
    }
    return this.close.push(piece);
  }

  /** A whole form: its calls when every one is usable, else its text as written. */
  private deliver(whole: string, id: string, out: StreamPart[]): void {
    const format = this.format ?? formatOf(whole);
    this.close = null;
    const found = format ? recoverCalls(whole, format, this.tools) : null;
    if (format && found?.kind === 'calls') {
      this.space = '';
      for (const part of segmentParts(found.segments, this.idPrefix)) out.push(part);
      this.afterCall = true;
      this.delivered({ format, calls: found.calls, repaired: found.repaired, asText: false });
      return;
    }
    if (format && found?.kind === 'invalid') this.delivered({ format, calls: 0, repaired: found.repaired, asText: true });
    this.plain(whole, id, out, false);
  }

  /** Text that is no form: out as it came, except whitespace after a call (`beforeForm`: another form follows it). */
  private plain(text: string, id: string, out: StreamPart[], beforeForm: boolean): void {
    if (this.afterCall) {
      if (text.trim() === '') {
        this.space = beforeForm ? '' : this.space + text;
        return;
      }
      text = this.space + text;
      this.space = '';
      this.afterCall = false;
    }
    if (text !== '') out.push({ type: 'text-delta', id, delta: text });
  }
}

/** A part of a Chat choice other than 0 (n > 1): such answers are not held, nor read for forms. */
export function ofOtherChoice(part: StreamPart): boolean {
  return 'choice' in part && part.choice !== undefined && part.choice !== 0;
}

/**
 * The cheap test every answer with tools pays: its first content decides a plain answer ('text':
 * a first character no form starts with; 'other': a native call, content of the wire's own,
 * another choice); false while it may still open a form (or nothing came yet). Reasoning decides
 * nothing where it is held with the text after it (`holdsReasoning`).
 */
export function opensPlain(parts: readonly StreamPart[], holdsReasoning: boolean): 'text' | 'other' | false {
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part.type === 'text-delta' && !part.choice) {
      const first = part.delta.trimStart();
      if (first === '') return false;
      return mayOpen(first[0]) ? false : 'text';
    }
    if (part.type === 'reasoning-delta' && part.delta !== '' && holdsReasoning) return false;
    if (part.type === 'tool-input-start' || part.type === 'opaque' || ofOtherChoice(part)) return 'other';
  }
  return false;
}
