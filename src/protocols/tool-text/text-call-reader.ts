import { readFactsOfParts } from '../core/part-facts.js';
import type { StreamPart } from '../core/stream-part.js';
import {
  EVENT_BAD_TOOL_CALL,
  EVENT_CONTENT,
  EVENT_DONE,
  EVENT_ERROR,
  EVENT_MALFORMED,
  EVENT_REWRITTEN,
  EVENT_USAGE_ONLY,
  type EventFacts,
  type StreamReader,
} from '../core/types.js';
import { firstCloseOf, formatOf, mayOpen, openingOf, type ToolTextFormat } from './forms.js';
import { recoverCalls, type Recovery } from './recover.js';
import type { ToolTextScope } from './scope.js';
import { segmentParts } from './segment-parts.js';

/** Where a stream's answer stands: not yet known, plain (read as the wire reads it), a form held, or converted (committed). */
type State = 'opening' | 'plain' | 'holding' | 'converted';

/**
 * The hold before commit, as a reader (DESIGN "A hold before commit is a reader"): it reads
 * each event with the wire's own reader, then, while the answer's text may open a tool call
 * written as text, takes choice 0's text and reasoning out of the event's parts. An event
 * whose content was taken is not content, so the one commit rule (part-facts.ts) does not
 * commit it: the held content is "undecided". When the text turns out plain the held parts come
 * back, in order, on the deciding event; when the form closes they are replaced by the calls it
 * holds (EVENT_REWRITTEN: a relay renders from then on); a call the client cannot run is an
 * error event (EVENT_BAD_TOOL_CALL) the attempt fails over on, or, on the route's last tier, the
 * text as the model wrote it. A plain answer pays one look at its first non-space character.
 */
export class TextCallReader implements StreamReader {
  private state: State = 'opening';
  /** Choice 0's text and reasoning parts taken out while undecided (given back for a plain answer). */
  private held: StreamPart[] = [];
  /** The answer's text held (while holding), or still to convert (after commit). */
  private text = '';
  private format: ToolTextFormat | null = null;
  /** How much of the held text was searched for the form's close (a long call is scanned once). */
  private searched = 0;
  private readonly out: StreamPart[] = [];
  private madeCalls = false;
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
    private readonly tier: { name: string; last?: boolean },
    private readonly holdsReasoning = true,
  ) {}

  ttftEnded(facts: EventFacts): { badCall: string } | 'released' | null {
    if (this.state === 'opening' && this.held.length > 0) {
      // Only reasoning (or whitespace) is held: the model is answering, so it goes out now; a form after it stays text.
      this.out.length = 0;
      facts.flags = 0;
      this.release(facts, null);
      return 'released';
    }
    if (this.state !== 'holding') return null;
    if (this.tier.last) {
      // No tier is left to ask: what the model wrote so far goes out, and the rest after it.
      this.report('passed_as_text', 0, false);
      this.out.length = 0;
      facts.flags = 0;
      this.release(facts, null);
      return 'released';
    }
    this.report('failed_over', 0, false);
    return { badCall: `a ${this.format ?? 'tool call'} form still open when the TTFT budget ended` };
  }

  read(data: string, facts: EventFacts): void {
    this.inner.read(data, facts);
    if (this.state === 'plain' || facts.flags & EVENT_MALFORMED) return;
    if (this.state === 'converted') return this.convertRest(facts);
    if (this.state === 'opening' && this.held.length === 0 && this.opensPlain(facts.parts)) {
      this.state = 'plain';
      return;
    }
    this.hold(facts);
  }

  /** The cheap test: this event's first content decides a plain answer (a first text character no form starts with, or a native call). */
  private opensPlain(parts: readonly StreamPart[]): boolean {
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part.type === 'text-delta' && !part.choice) {
        const first = part.delta.trimStart();
        if (first === '') return false;
        return !mayOpen(first[0]);
      }
      if (part.type === 'reasoning-delta' && part.delta !== '' && this.holdsReasoning) return false;
      if (part.type === 'tool-input-start' || part.type === 'opaque' || ofOtherChoice(part)) return true;
    }
    // No content in this event: nothing to hold yet.
    return false;
  }

  /** Takes this event's text and reasoning into the hold, then decides if it can. */
  private hold(facts: EventFacts): void {
    const out = this.out;
    out.length = 0;
    let ended = (facts.flags & EVENT_DONE) !== 0;
    let finish: StreamPart | null = null;
    let plain = false;
    for (const part of facts.parts) {
      if (ofOtherChoice(part)) plain = true;
      switch (part.type) {
        case 'text-delta':
          this.text += part.delta;
          this.held.push(part);
          break;
        case 'text-start':
        case 'text-end':
          this.held.push(part);
          break;
        case 'reasoning-start':
        case 'reasoning-delta':
        case 'reasoning-end':
          if (this.holdsReasoning) this.held.push(part);
          else out.push(part);
          break;
        case 'finish':
          ended = true;
          finish = part;
          break;
        case 'tool-input-start':
        case 'tool-input-delta':
        case 'tool-input-end':
        case 'opaque':
          plain = true; // a native call, or content of the wire's own: not text
          out.push(part);
          break;
        default:
          out.push(part);
      }
    }
    if (!plain && this.state === 'opening') {
      const opening = openingOf(this.text.trimStart());
      if (opening === 'no') plain = true;
      else if (opening === 'open') this.state = 'holding';
    }
    if (plain || (ended && this.state === 'opening')) return this.release(facts, finish);
    if (this.state === 'opening') return this.settle(facts);
    this.format ??= formatOf(this.text.trimStart());
    const closedAt = this.format ? firstCloseOf(this.format, this.text, this.searched) : -1;
    this.searched = this.text.length;
    if (ended || closedAt >= 0) return this.close(facts, ended ? this.text.length : closedAt, finish);
    this.settle(facts);
  }

  /** The held content was a plain answer after all: it comes back, in order, before this event's other parts. */
  private release(facts: EventFacts, finish: StreamPart | null): void {
    this.state = 'plain';
    const parts = [...this.held, ...this.out];
    if (finish) parts.push(finish);
    this.held = [];
    this.text = '';
    this.setParts(facts, parts, 0);
  }

  /** Still undecided: the event goes on without its text. */
  private settle(facts: EventFacts): void {
    this.setParts(facts, this.out.slice(), 0);
  }

  /** The form closed (or the answer ended): its calls, or a failover, or (last tier) the text as written. */
  private close(facts: EventFacts, end: number, finish: StreamPart | null): void {
    const format = this.format ?? 'json';
    const recovery = recoverCalls(this.text.slice(0, end), format, this.scope.tools);
    if (recovery.kind === 'not_a_call') return this.release(facts, finish);
    if (recovery.kind === 'invalid') {
      if (this.tier.last || this.committed) {
        this.report('passed_as_text', 0, recovery.repaired, format);
        return this.release(facts, finish);
      }
      this.report('failed_over', 0, recovery.repaired, format);
      this.state = 'plain';
      this.held = [];
      return this.setParts(facts, [{ type: 'error', message: recovery.message }], EVENT_ERROR | EVENT_BAD_TOOL_CALL);
    }
    this.report(recovery.repaired ? 'repaired' : 'recovered', recovery.calls, recovery.repaired, format);
    this.state = 'converted';
    // The reasoning before the call is the answer's too; the form's text is replaced by its calls.
    const reasoning = this.held.filter((part) => part.type.startsWith('reasoning-'));
    this.held = [];
    this.text = this.text.slice(end);
    const parts = [...reasoning, ...this.out, ...this.recovered(recovery)];
    if (finish) parts.push(this.finished(finish));
    this.setParts(facts, parts, EVENT_REWRITTEN);
  }

  /**
   * After a converted commit: the rest of the answer's text is kept until the answer ends,
   * then read for more calls (Hermes writes one form per call); text that holds none goes out as text.
   */
  private convertRest(facts: EventFacts): void {
    const parts: StreamPart[] = [];
    let finish: StreamPart | null = null;
    for (const part of facts.parts) {
      if (ofOtherChoice(part)) continue;
      if (part.type === 'text-delta') this.text += part.delta;
      else if (part.type === 'finish') finish = part;
      else if (part.type !== 'text-start' && part.type !== 'text-end') parts.push(part);
    }
    if (finish || facts.flags & EVENT_DONE) {
      const rest = this.text;
      this.text = '';
      if (rest.trim() !== '') {
        const lead = rest.trimStart();
        const format = openingOf(lead) === 'open' ? formatOf(lead) : null;
        const recovery = format ? recoverCalls(rest, format, this.scope.tools) : null;
        parts.push(...(recovery?.kind === 'calls' ? this.recovered(recovery) : segmentParts([{ type: 'text', text: rest }], this.scope.idPrefix)));
      }
      if (finish) parts.push(this.finished(finish));
    }
    this.setParts(facts, parts, EVENT_REWRITTEN);
  }

  private recovered(recovery: Extract<Recovery, { kind: 'calls' }>): StreamPart[] {
    this.madeCalls = true;
    return segmentParts(recovery.segments, this.scope.idPrefix);
  }

  /** The answer's end reason: a turn that made calls ends in them, as a native one would. */
  private finished(finish: StreamPart): StreamPart {
    return finish.type === 'finish' && this.madeCalls && finish.reason === 'stop' ? { type: 'finish', reason: 'tool_calls' } : finish;
  }

  /** The event's parts replaced: its facts read again from them, by the one rule. */
  private setParts(facts: EventFacts, parts: StreamPart[], flags: number): void {
    const kept = facts.flags & (EVENT_DONE | EVENT_ERROR | EVENT_USAGE_ONLY);
    facts.parts = parts;
    facts.flags = 0;
    facts.usage = undefined;
    readFactsOfParts(parts, facts);
    facts.flags |= kept | flags;
    if (facts.flags & EVENT_CONTENT) this.committed = true;
  }

  private report(result: 'recovered' | 'repaired' | 'failed_over' | 'passed_as_text', calls: number, repaired: boolean, format = this.format ?? 'json'): void {
    this.scope.report({ tier: this.tier.name, format, calls, repaired, result });
  }
}

/** A part of a Chat choice other than 0 (n > 1): such answers are not held. */
function ofOtherChoice(part: StreamPart): boolean {
  return 'choice' in part && part.choice !== undefined && part.choice !== 0;
}
