import { readFactsOfParts } from '../core/part-facts.js';
import type { StreamPart } from '../core/stream-part.js';
import {
  EVENT_BAD_TOOL_CALL,
  EVENT_CONTENT,
  EVENT_DONE,
  EVENT_ERROR,
  EVENT_MALFORMED,
  EVENT_PROGRESS,
  EVENT_REWRITTEN,
  EVENT_USAGE_ONLY,
  type EventFacts,
  type StreamReader,
} from '../core/event-facts.js';
import { CommittedText, type LaterForm, ofOtherChoice, opensPlain } from './committed-text.js';
import { FormClose, formatOf, openerTailAt, openingOf, tagOpenerAt, type ToolTextFormat } from './forms.js';
import { recoverCalls } from './recover.js';
import { AttemptToolText, type TierPlace, type ToolTextScope } from './scope.js';
import { segmentParts } from './segment-parts.js';

/**
 * Where a stream's answer stands: its start not yet known, a form held at its start, a form the
 * client cannot run waiting to know whether the tier is the last the request tries (all three
 * before commit), committed (its later text read for forms), or read no more (a native call,
 * several choices).
 */
type State = 'opening' | 'holding' | 'judging' | 'committed' | 'off';

/**
 * The hold of a tool call written as text, as a reader: it reads each event with the wire's own
 * reader, then takes choice 0's text and reasoning out of the parts while the answer's start may
 * open a form (content taken out is not content: the one commit rule, part-facts.ts, does not
 * commit it). Plain text comes back, in order, on the deciding event; a closed form is replaced
 * by its calls (EVENT_REWRITTEN: a relay renders from then on); a call the client cannot run is
 * an error event (EVENT_BAD_TOOL_CALL) to fail over on, or, on the last tier the request tries,
 * the text as written. After commit, forms that come later are read (committed-text.ts). A
 * plain answer pays a look at its first non-space character, then one for `<` or `[` per delta.
 */
export class TextCallReader implements StreamReader {
  private state: State = 'opening';
  /** Choice 0's text and reasoning parts taken out while undecided (given back for a plain answer). */
  private held: StreamPart[] = [];
  /** The held text delta that grows (its own copy). */
  private growing: { type: 'text-delta'; id: string; delta: string } = { type: 'text-delta', id: '', delta: '' };
  /** The answer's text held before commit. */
  private text = '';
  /** The held text has begun, or may have begun, a form (it is not whitespace alone). */
  private begun = false;
  private format: ToolTextFormat | null = null;
  private close: FormClose | null = null;
  private readonly out: StreamPart[] = [];
  private readonly later: CommittedText;
  /** This attempt's report (calls delivered, repaired, result). */
  private readonly report: AttemptToolText;
  /** While judging: why the form cannot be run. */
  private unusable: { message: string; repaired: boolean } | null = null;
  /** Content has gone out (the stream committed): a bad call can no longer fail over. */
  private committed = false;

  /**
   * `holdsReasoning`: a relayed stream holds reasoning with the text after it (its bytes cannot
   * be rendered after commit); a rendered one lets reasoning commit as it always did, and still
   * converts a form that follows it.
   */
  constructor(
    private readonly inner: StreamReader,
    private readonly scope: ToolTextScope,
    private readonly place: TierPlace,
    private readonly holdsReasoning = true,
  ) {
    this.later = new CommittedText(scope.tools, scope.idPrefix, this.laterForm, this.finished);
    this.report = new AttemptToolText(scope, place.name);
  }

  heldForm(): number {
    if (this.state === 'holding' || this.state === 'judging' || (this.state === 'opening' && this.begun)) return this.text.length;
    return this.state === 'committed' ? this.later.formChars : 0;
  }

  awaitsLastTier(): boolean {
    return this.state === 'judging';
  }

  lastTierKnown(facts: EventFacts): { badCall: string } | 'released' | null {
    const unusable = this.unusable;
    if (this.state !== 'judging' || unusable === null) return null;
    this.unusable = null;
    this.out.length = 0;
    facts.flags = 0;
    return this.judge(facts, unusable.message, unusable.repaired, null);
  }

  ttftEnded(facts: EventFacts): 'released' | null {
    if (this.state !== 'opening' || this.begun || this.held.length === 0) return null;
    // Only reasoning (or whitespace) is held: the model is answering, so it goes out now.
    this.out.length = 0;
    facts.flags = 0;
    this.release(facts, null, 'scan');
    return 'released';
  }

  holdEnded(facts: EventFacts, why: string): { badCall: string } | 'released' {
    this.out.length = 0;
    facts.flags = 0;
    return this.judge(facts, `a ${this.format ?? 'tool call'} form ${why}`, false, null);
  }

  read(data: string, facts: EventFacts): void {
    this.inner.read(data, facts);
    if (this.state === 'off' || facts.flags & EVENT_MALFORMED) return;
    if (this.state === 'committed') return this.readCommitted(facts);
    if (this.state === 'judging') return this.keep(facts);
    if (this.state === 'opening' && this.held.length === 0) {
      const plain = opensPlain(facts.parts, this.holdsReasoning);
      if (plain === 'other') this.state = 'off';
      if (plain === 'text') this.state = this.scope.readsLater ? 'committed' : 'off';
      if (plain) return this.state === 'committed' ? this.readCommitted(facts) : undefined;
    }
    this.hold(facts);
  }

  /** Takes this event's text and reasoning into the hold, then decides if it can. */
  private hold(facts: EventFacts): void {
    const out = this.out;
    out.length = 0;
    let ended = (facts.flags & EVENT_DONE) !== 0;
    let finish: StreamPart | null = null;
    let plain = false;
    let native = false;
    let added = '';
    for (const part of facts.parts) {
      const type = part.type;
      if (ofOtherChoice(part)) native = plain = true;
      if (type === 'text-delta') {
        added += part.delta;
        this.later.lastId = part.id;
        // A long form is held as one growing delta (a part of its own), not as a part per token.
        const last = this.held[this.held.length - 1];
        if (last === this.growing && last.id === part.id) last.delta += part.delta;
        else if (last?.type === 'text-delta' && last.id === part.id)
          this.held[this.held.length - 1] = this.growing = { ...last, delta: last.delta + part.delta };
        else this.held.push(part);
      } else if (type === 'text-start' || type === 'text-end' || (this.holdsReasoning && type.startsWith('reasoning-'))) this.held.push(part);
      else if (type === 'finish') {
        ended = true;
        finish = part;
      } else {
        // A native call, or content of the wire's own, is not text.
        if (type.startsWith('tool-input-') || type === 'opaque') native = plain = true;
        out.push(part);
      }
    }
    this.text += added;
    if (!plain && this.state === 'opening') {
      const lead = this.text.trimStart();
      const opening = openingOf(lead);
      if (opening === 'no') plain = true;
      else if (opening === 'open') this.state = 'holding';
      this.begun = lead !== '';
    }
    if (plain || (ended && this.state === 'opening')) return this.release(facts, finish, native ? 'native' : 'scan');
    if (this.state === 'opening') return this.settle(facts);
    let closedAt = -1;
    if (this.close === null) {
      this.format = formatOf(this.text.trimStart());
      if (this.format !== null) {
        this.close = new FormClose(this.format, this.text);
        closedAt = this.close.push(this.text);
      }
    } else if (added !== '') closedAt = this.close.push(added);
    if (closedAt >= 0 || ended) return this.closeForm(facts, closedAt >= 0 ? closedAt : this.text.length, finish);
    this.settle(facts);
  }

  /**
   * The held content goes out after all: it comes back, in order, before this event's other
   * parts. `how`: plain text, read for a form after it ('scan'); a form's text as written (read
   * no further: the next text is); or beside a native call (the answer is read no more).
   */
  private release(facts: EventFacts, finish: StreamPart | null, how: 'scan' | 'as_written' | 'native'): void {
    const parts = [...this.held, ...this.out];
    if (finish) parts.push(finish);
    // Text that holds no opener, nor what may begin one, comes back as it came.
    const look = how === 'scan' && (tagOpenerAt(this.text) >= 0 || openerTailAt(this.text) >= 0);
    this.held = [];
    this.text = '';
    this.begun = false;
    this.state = this.scope.readsLater && how !== 'native' ? 'committed' : 'off';
    if (look && this.state === 'committed') {
      facts.parts = parts;
      return this.readCommitted(facts, true);
    }
    if (finish) parts[parts.length - 1] = this.finished(finish);
    this.setParts(facts, parts, 0);
  }

  /** Still undecided: the event goes on without its text. */
  private settle(facts: EventFacts): void {
    this.setParts(facts, this.out.slice(), 0);
  }

  /** The form at the answer's start closed at `end` (or the answer ended): its calls, or a failover, or (last tier) the text as written. */
  private closeForm(facts: EventFacts, end: number, finish: StreamPart | null): void {
    const format = this.format ?? 'json';
    const found = recoverCalls(this.text.slice(0, end), format, this.scope.tools);
    if (found.kind === 'not_a_call') return this.release(facts, finish, 'as_written');
    if (found.kind === 'invalid') {
      if (this.committed || this.place.isLast() !== undefined) {
        const verdict = this.judge(facts, found.message, found.repaired, finish);
        if (verdict !== 'released') this.setParts(facts, [{ type: 'error', message: verdict.badCall }], EVENT_ERROR | EVENT_BAD_TOOL_CALL);
        return;
      }
      // Whether a later tier fits is still being counted: everything waits, as written, until the attempt knows (lastTierKnown).
      this.state = 'judging';
      this.unusable = { message: found.message, repaired: found.repaired };
      if (finish) this.held.push(finish);
      return this.settle(facts);
    }
    this.report.note(found.repaired ? 'repaired' : 'recovered', found.calls, found.repaired, format);
    // The reasoning before the call is the answer's too; the form's text is replaced by its calls.
    const parts = this.held.filter((part) => part.type.startsWith('reasoning-'));
    for (const part of this.out) parts.push(part);
    for (const part of segmentParts(found.segments, this.scope.idPrefix)) parts.push(part);
    const rest = this.text.slice(end);
    this.held = [];
    this.text = '';
    this.state = 'committed';
    this.later.afterCall = true;
    if (rest !== '') this.later.text(rest, this.later.lastId, parts);
    if (finish || facts.flags & EVENT_DONE) this.later.end(this.later.lastId, parts);
    if (finish) parts.push(this.finished(finish));
    this.setParts(facts, parts, EVENT_REWRITTEN);
  }

  /**
   * A form the client cannot run: on the last tier the request tries (or once the stream has
   * committed) the text goes out as the model wrote it; else the attempt fails over on `message`.
   */
  private judge(facts: EventFacts, message: string, repaired: boolean, finish: StreamPart | null): { badCall: string } | 'released' {
    const format = this.format ?? 'json';
    if (this.committed || this.place.isLast() === true) {
      this.report.note('passed_as_text', 0, repaired, format);
      this.release(facts, finish, 'as_written');
      return 'released';
    }
    this.report.note('failed_over', 0, repaired, format);
    this.state = 'off';
    this.held = [];
    return { badCall: message };
  }

  /** While judging: the event's content waits with the rest, as written (its usage and errors go on). */
  private keep(facts: EventFacts): void {
    this.out.length = 0;
    for (const part of facts.parts) {
      if (part.type === 'text-delta') this.text += part.delta;
      (part.type === 'usage' || part.type === 'error' ? this.out : this.held).push(part);
    }
    this.settle(facts);
  }

  /** After commit: the event's text read for forms that come later (committed-text.ts); most events go on untouched. */
  private readCommitted(facts: EventFacts, look = false): void {
    const read = this.later.read(facts.parts, (facts.flags & EVENT_DONE) !== 0, look);
    if (this.later.stopped) this.state = 'off';
    if (read) this.setParts(facts, read, this.later.flags);
  }

  /** A form read after commit was delivered: the attempt's report counts it. */
  private readonly laterForm = (form: LaterForm): void => {
    this.report.note(form.asText ? 'passed_as_text' : form.repaired ? 'repaired' : 'recovered', form.calls, form.repaired, form.format);
  };

  /** The answer's end reason: a turn that made calls ends in them, as a native one would. */
  private readonly finished = (finish: StreamPart): StreamPart => {
    const madeCalls = this.report.calls > 0;
    return finish.type === 'finish' && madeCalls && finish.reason === 'stop' ? { type: 'finish', reason: 'tool_calls' } : finish;
  };

  /** The event's parts replaced: its facts read again from them, by the one rule. */
  private setParts(facts: EventFacts, parts: StreamPart[], flags: number): void {
    // The upstream's content is progress even when it is held (a form written as text): its silence clock hears it.
    const kept = facts.flags & (EVENT_DONE | EVENT_ERROR | EVENT_USAGE_ONLY | EVENT_PROGRESS);
    facts.parts = parts;
    facts.flags = 0;
    facts.usage = undefined;
    readFactsOfParts(parts, facts);
    facts.flags |= kept | flags;
    if (facts.flags & EVENT_CONTENT) this.committed = true;
  }
}
