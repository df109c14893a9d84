import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { bodyObject } from '../core/json.js';
import { type AssistantPart, type FinishReason, type NeutralResponse, wholeResponse } from '../core/neutral.js';
import { chatUsage } from './usage.js';

/** A Chat Completions finish_reason as a neutral one. */
export function chatFinish(reason: unknown): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  if (reason === 'content_filter') return 'content_filter';
  return 'stop';
}

/** A whole chat completion as a neutral response; 'not_json' when it is not one. */
export function decodeChatResponse(body: Buffer): NeutralResponse | 'not_json' {
  const parsed = bodyObject(body);
  if (parsed === null || !Array.isArray(parsed.choices)) return 'not_json';
  const choice = parsed.choices[0];
  const message = isRecord(choice) && isRecord(choice.message) ? choice.message : {};
  const content: AssistantPart[] = [];
  const reasoning = stringField(message.reasoning_content) ?? stringField(message.reasoning);
  if (reasoning) content.push({ type: 'reasoning', text: reasoning });
  const text = stringField(message.content) ?? stringField(message.refusal);
  if (text) content.push({ type: 'text', text });
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call: unknown, index: number) => {
      if (!isRecord(call) || !isRecord(call.function)) return;
      const args = call.function.arguments;
      content.push({
        type: 'tool_call',
        id: stringField(call.id) ?? `call_${index}`,
        name: stringField(call.function.name) ?? '',
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      });
    });
  }
  const finish = chatFinish(isRecord(choice) ? choice.finish_reason : undefined);
  return wholeResponse(content, finish, { id: parsed.id, model: parsed.model, usage: chatUsage(parsed.usage, parsed.timings) });
}
