import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { bodyObject } from '../core/json.js';
import { type AssistantPart, type NeutralResponse, wholeResponse } from '../core/neutral.js';
import { responsesUsage } from './usage.js';

/** A Responses object's status as a neutral finish (before tool calls settle it). */
export function responsesFinish(response: Record<string, unknown>): 'stop' | 'length' | 'content_filter' {
  if (response.status !== 'incomplete') return 'stop';
  const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
  return reason === 'content_filter' ? 'content_filter' : 'length';
}

/** A whole Responses object as a neutral response; 'not_json' when it is not one. */
export function decodeResponsesResponse(body: Buffer): NeutralResponse | 'not_json' {
  const parsed = bodyObject(body);
  if (parsed === null || !Array.isArray(parsed.output)) return 'not_json';
  const content: AssistantPart[] = [];
  for (const item of parsed.output) {
    if (!isRecord(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) if (isRecord(part) && typeof part.text === 'string') content.push({ type: 'text', text: part.text });
    } else if (item.type === 'function_call') {
      content.push({
        type: 'tool_call',
        id: stringField(item.call_id) ?? '',
        name: stringField(item.name) ?? '',
        arguments: stringField(item.arguments) ?? '{}',
      });
    } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
      const text = item.summary.map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).join('\n');
      if (text) content.push({ type: 'reasoning', text });
    }
  }
  return wholeResponse(content, responsesFinish(parsed), { id: parsed.id, model: parsed.model, usage: responsesUsage(parsed.usage) });
}
