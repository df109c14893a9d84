import { isRecord } from '../../util/is-record.js';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_USAGE, EVENT_USAGE_ONLY, type EventFacts,
} from '../types.js';
import { eventObject } from '../json.js';
import { chatUsage } from './usage.js';

/** Reads one Chat Completions SSE data payload: `[DONE]`, or a chunk. */
export function inspectChatEvent(data: string, out: EventFacts): void {
  if (data === '[DONE]') {
    out.flags = EVENT_DONE;
    out.usage = undefined;
    out.text = undefined;
    out.json = undefined;
    return;
  }
  const chunk = eventObject(data, out);
  if (chunk === null) return;
  let flags = 0;
  if (chunk.error != null) flags |= EVENT_ERROR;
  const choices = chunk.choices;
  if (Array.isArray(choices)) {
    for (const choice of choices) {
      if (!isRecord(choice)) continue;
      if (choice.finish_reason != null) flags |= EVENT_FINISH | EVENT_CONTENT;
      const delta = choice.delta;
      if (isRecord(delta)) {
        const text = deltaText(delta);
        if (text !== undefined) {
          flags |= EVENT_CONTENT;
          out.text = out.text === undefined ? text : out.text + text;
        }
      }
    }
  }
  const usage = chatUsage(chunk.usage);
  if (usage) {
    out.usage = usage;
    flags |= EVENT_USAGE;
    if (Array.isArray(choices) && choices.length === 0) flags |= EVENT_USAGE_ONLY;
  }
  out.flags = flags;
}

const TEXT_KEYS = ['content', 'reasoning_content', 'reasoning', 'refusal'] as const;

/** The generated text of a delta, or undefined when it carries none (a role-only delta). */
function deltaText(delta: Record<string, unknown>): string | undefined {
  let text = '';
  let content = false;
  for (const key of TEXT_KEYS) {
    const value = delta[key];
    if (typeof value === 'string' && value.length > 0) {
      text += value;
      content = true;
    }
  }
  const calls = delta.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) {
    content = true;
    for (const call of calls) {
      const fn = isRecord(call) ? call.function : undefined;
      if (isRecord(fn)) text += `${typeof fn.name === 'string' ? fn.name : ''}${typeof fn.arguments === 'string' ? fn.arguments : ''}`;
    }
  }
  if (isRecord(delta.function_call)) content = true;
  return content ? text : undefined;
}
