import { settledFinish, type NeutralResponse } from '../core/neutral.js';
import type { StreamPart } from '../core/stream-part.js';
import { CommittedText } from './committed-text.js';
import { FormClose, formatOf, openingOf, tagOpenerAt } from './forms.js';
import { recoverCalls } from './recover.js';
import { AttemptToolText, type TierPlace, type ToolTextScope } from './scope.js';
import { partsContent, segmentParts } from './segment-parts.js';

/**
 * A whole (non-streaming) answer whose text holds tool calls written as text, read as a stream's
 * is: a form at its start, then forms after text. The answer with the calls in their places
 * (finish `tool_calls`); or `badToolCall` (why the attempt fails over: a form at the start the
 * client cannot run, on a tier that is not the last this request tries); 'undecided' when that
 * is not known yet (ask again once it is); or null: the answer stays as it is (plain text, a
 * native call, a form given back as the text it was).
 */
export function recoverWholeAnswer(
  response: NeutralResponse,
  scope: ToolTextScope,
  place: TierPlace,
): NeutralResponse | { badToolCall: string } | 'undecided' | null {
  if (response.content.some((part) => part.type === 'tool_call')) return null;
  const text = response.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const lead = text.trimStart();
  const opens = openingOf(lead) === 'open';
  if (!opens && !(scope.readsLater && tagOpenerAt(text) >= 0)) return null;
  const report = new AttemptToolText(scope, place.name);
  const parts: StreamPart[] = [];
  let rest = text;
  if (opens) {
    const format = formatOf(lead) ?? 'json';
    const end = new FormClose(format, text).push(text);
    const found = recoverCalls(end < 0 ? text : text.slice(0, end), format, scope.tools);
    if (found.kind === 'not_a_call') return null;
    if (found.kind === 'invalid') {
      const last = place.isLast();
      if (last === undefined) return 'undecided';
      report.note(last ? 'passed_as_text' : 'failed_over', 0, found.repaired, format);
      return last ? null : { badToolCall: found.message };
    }
    report.note(found.repaired ? 'repaired' : 'recovered', found.calls, found.repaired, format);
    for (const part of segmentParts(found.segments, scope.idPrefix)) parts.push(part);
    rest = end < 0 ? '' : text.slice(end);
  }
  const later = new CommittedText(
    scope.tools,
    scope.idPrefix,
    (form) => report.note(form.asText ? 'passed_as_text' : form.repaired ? 'repaired' : 'recovered', form.calls, form.repaired, form.format),
    (finish) => finish,
  );
  later.afterCall = opens;
  later.text(rest, 'text-0', parts);
  later.end('text-0', parts);
  if (report.calls === 0) return null;
  const reasoning = response.content.filter((part) => part.type === 'reasoning');
  return { ...response, content: [...reasoning, ...partsContent(parts)], finishReason: settledFinish(response.finishReason, true) };
}
