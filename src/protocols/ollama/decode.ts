import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { bodyObject } from '../core/json.js';
import { type AssistantPart, type FinishReason, type NeutralResponse, wholeResponse } from '../core/neutral.js';
import { ollamaUsage } from './usage.js';

/** An Ollama done_reason as a neutral finish. */
export function ollamaFinish(reason: unknown): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/** A whole Ollama answer (/api/chat's `message`, or /api/generate's `response`) as a neutral response; 'not_json' when it is not one. */
export function decodeOllamaResponse(body: Buffer): NeutralResponse | 'not_json' {
  const parsed = bodyObject(body);
  if (parsed === null) return 'not_json';
  const generated = typeof parsed.response === 'string';
  if (!isRecord(parsed.message) && !generated) return 'not_json';
  const message = isRecord(parsed.message) ? parsed.message : parsed;
  const text = isRecord(parsed.message) ? message.content : parsed.response;
  const content: AssistantPart[] = [];
  if (typeof message.thinking === 'string' && message.thinking !== '') content.push({ type: 'reasoning', text: message.thinking });
  if (typeof text === 'string' && text !== '') content.push({ type: 'text', text });
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call: unknown, index: number) => {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
      if (!fn) return;
      const id = (isRecord(call) ? stringField(call.id) : undefined) ?? `call_${index}`;
      content.push({
        type: 'tool_call',
        id,
        name: stringField(fn.name) ?? '',
        arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}),
      });
    });
  }
  return wholeResponse(content, ollamaFinish(parsed.done_reason), { model: parsed.model, usage: ollamaUsage(parsed) });
}
