import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { bodyObject } from '../core/json.js';
import { type AssistantPart, type FinishReason, type NeutralResponse, wholeResponse } from '../core/neutral.js';
import { mergeUsage } from '../core/usage.js';
import { anthropicUsage } from './usage.js';

/** An Anthropic stop_reason as a neutral one. */
export function anthropicFinish(reason: unknown): FinishReason {
  if (reason === 'max_tokens') return 'length';
  if (reason === 'tool_use') return 'tool_calls';
  if (reason === 'refusal') return 'content_filter';
  return 'stop'; // end_turn, stop_sequence, pause_turn
}

/** A whole Anthropic message as a neutral response; 'not_json' when it is not one. */
export function decodeMessagesResponse(body: Buffer): NeutralResponse | 'not_json' {
  const parsed = bodyObject(body);
  if (parsed === null || !Array.isArray(parsed.content)) return 'not_json';
  const content: AssistantPart[] = [];
  for (const block of parsed.content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') content.push({ type: 'text', text: block.text });
    else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      const signature = stringField(block.signature);
      content.push(signature ? { type: 'reasoning', text: block.thinking, signature } : { type: 'reasoning', text: block.thinking });
    } else if (block.type === 'tool_use') {
      content.push({ type: 'tool_call', id: stringField(block.id) ?? '', name: stringField(block.name) ?? '', arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  const finish = anthropicFinish(parsed.stop_reason);
  const usage = anthropicUsage(parsed.usage);
  return wholeResponse(content, finish, { id: parsed.id, model: parsed.model, usage: usage && mergeUsage(undefined, usage) });
}
