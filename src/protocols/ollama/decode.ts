import { isRecord } from '../../util/is-record.js';
import { stringField } from '../fields.js';
import { bodyObject } from '../json.js';
import { type AssistantPart, type FinishReason, type NeutralEvent, type NeutralResponse, wholeResponse } from '../neutral.js';
import type { EventFacts, StreamDecoder } from '../types.js';
import { ollamaUsage } from './usage.js';

function ollamaFinish(reason: unknown): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/**
 * Ollama lines → neutral events. Tool calls come whole (name and arguments as an object);
 * Ollama says `done_reason: "stop"` even after tool calls, which the renderers settle as tool calls.
 */
export class OllamaDecoder implements StreamDecoder {
  private calls = 0;

  decode(facts: EventFacts, out: NeutralEvent[]): void {
    const line = facts.json;
    if (!isRecord(line)) return;
    if (line.error != null) {
      out.push({ type: 'error', message: typeof line.error === 'string' ? line.error : 'the upstream reported an error' });
      return;
    }
    const message = isRecord(line.message) ? line.message : {};
    if (typeof message.thinking === 'string' && message.thinking !== '') out.push({ type: 'reasoning', delta: message.thinking });
    if (typeof message.content === 'string' && message.content !== '') out.push({ type: 'text', delta: message.content });
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
        if (!fn) continue;
        const index = this.calls++;
        const id = (isRecord(call) ? stringField(call.id) : undefined) ?? `call_${index}`;
        out.push({ type: 'tool_call_start', index, id, name: stringField(fn.name) ?? '' });
        out.push({ type: 'tool_call_delta', index, delta: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
      }
    }
    if (line.done === true) {
      if (facts.usage) out.push({ type: 'usage', usage: facts.usage });
      out.push({ type: 'finish', reason: ollamaFinish(line.done_reason) });
    }
  }
}

/** A whole Ollama /api/chat answer as a neutral response; 'not_json' when it is not one. */
export function decodeOllamaResponse(body: Buffer): NeutralResponse | 'not_json' {
  const parsed = bodyObject(body);
  if (parsed === null || !isRecord(parsed.message)) return 'not_json';
  const message = parsed.message;
  const content: AssistantPart[] = [];
  if (typeof message.thinking === 'string' && message.thinking !== '') content.push({ type: 'reasoning', text: message.thinking });
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((call: unknown, index: number) => {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
      if (!fn) return;
      const id = (isRecord(call) ? stringField(call.id) : undefined) ?? `call_${index}`;
      content.push({ type: 'tool_call', id, name: stringField(fn.name) ?? '', arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
    });
  }
  return wholeResponse(content, ollamaFinish(parsed.done_reason), { model: parsed.model, usage: ollamaUsage(parsed) });
}
