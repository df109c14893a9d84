import { isRecord } from '../../util/is-record.js';
import { stringField } from '../fields.js';
import { bodyObject } from '../json.js';
import { type AssistantPart, type NeutralEvent, type NeutralResponse, settledFinish, wholeResponse } from '../neutral.js';
import type { EventFacts, StreamDecoder } from '../types.js';
import { responsesUsage } from './usage.js';

/** Responses events → neutral events (tool calls numbered in the order their items appear). */
export class ResponsesDecoder implements StreamDecoder {
  /** output_index of a function_call item → neutral tool-call index. */
  private readonly calls = new Map<number, number>();

  decode(facts: EventFacts, out: NeutralEvent[]): void {
    const event = facts.json;
    if (!isRecord(event)) return;
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof event.delta === 'string' && event.delta !== '') out.push({ type: 'text', delta: event.delta });
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof event.delta === 'string' && event.delta !== '') out.push({ type: 'reasoning', delta: event.delta });
        return;
      case 'response.output_item.added': {
        const item = isRecord(event.item) ? event.item : {};
        if (item.type !== 'function_call') return;
        const index = this.calls.size;
        this.calls.set(typeof event.output_index === 'number' ? event.output_index : index, index);
        out.push({ type: 'tool_call_start', index, id: stringField(item.call_id) ?? `call_${index}`, name: stringField(item.name) ?? '' });
        return;
      }
      case 'response.function_call_arguments.delta': {
        const index = this.calls.get(typeof event.output_index === 'number' ? event.output_index : -1);
        if (index !== undefined && typeof event.delta === 'string' && event.delta !== '') out.push({ type: 'tool_call_delta', index, delta: event.delta });
        return;
      }
      case 'response.completed':
      case 'response.incomplete': {
        if (facts.usage) out.push({ type: 'usage', usage: facts.usage });
        const response = isRecord(event.response) ? event.response : {};
        // Responses has no "ended in tool calls" status: a completed turn that made calls ended in them.
        out.push({ type: 'finish', reason: settledFinish(finishOf(response), this.calls.size > 0) });
        return;
      }
      case 'response.failed':
      case 'error': {
        const error = isRecord(event.response) && isRecord(event.response.error) ? event.response.error : event;
        out.push({ type: 'error', message: stringField(error.message) ?? 'the upstream reported an error' });
        return;
      }
    }
  }
}

function finishOf(response: Record<string, unknown>): 'stop' | 'length' | 'content_filter' {
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
      content.push({ type: 'tool_call', id: stringField(item.call_id) ?? '', name: stringField(item.name) ?? '', arguments: stringField(item.arguments) ?? '{}' });
    } else if (item.type === 'reasoning' && Array.isArray(item.summary)) {
      const text = item.summary.map((s) => (isRecord(s) && typeof s.text === 'string' ? s.text : '')).join('\n');
      if (text) content.push({ type: 'reasoning', text });
    }
  }
  return wholeResponse(content, finishOf(parsed), { id: parsed.id, model: parsed.model, usage: responsesUsage(parsed.usage) });
}
