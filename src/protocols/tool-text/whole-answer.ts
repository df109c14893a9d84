import { settledFinish, type NeutralResponse } from '../core/neutral.js';
import { formatOf, openingOf } from './forms.js';
import { recoverCalls } from './recover.js';
import type { ToolTextScope } from './scope.js';
import { segmentContent } from './segment-parts.js';

/**
 * A whole (non-streaming) answer whose text is a tool call written as text: the answer with
 * the calls in its place (finish `tool_calls`), or `badToolCall` (why the attempt fails over),
 * or null: the answer stays as it is (plain text, a native call, or, on the last tier, a call
 * the client cannot run, delivered as written).
 */
export function recoverWholeAnswer(
  response: NeutralResponse,
  scope: ToolTextScope,
  tier: { name: string; last?: boolean },
): NeutralResponse | { badToolCall: string } | null {
  if (response.content.some((part) => part.type === 'tool_call')) return null;
  const text = response.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const lead = text.trimStart();
  if (openingOf(lead) !== 'open') return null;
  const format = formatOf(lead) ?? 'json';
  const recovery = recoverCalls(text, format, scope.tools);
  if (recovery.kind === 'not_a_call') return null;
  if (recovery.kind === 'invalid') {
    const last = tier.last === true;
    scope.report({ tier: tier.name, format, calls: 0, repaired: recovery.repaired, result: last ? 'passed_as_text' : 'failed_over' });
    return last ? null : { badToolCall: recovery.message };
  }
  scope.report({ tier: tier.name, format, calls: recovery.calls, repaired: recovery.repaired, result: recovery.repaired ? 'repaired' : 'recovered' });
  const reasoning = response.content.filter((part) => part.type === 'reasoning');
  return {
    ...response,
    content: [...reasoning, ...segmentContent(recovery.segments, scope.idPrefix)],
    finishReason: settledFinish(response.finishReason, true),
  };
}
