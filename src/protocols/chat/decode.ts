import { isRecord } from '../../util/is-record.js';
import { stringField } from '../fields.js';
import { bodyObject } from '../json.js';
import { type AssistantPart, type FinishReason, type NeutralEvent, type NeutralResponse, wholeResponse } from '../neutral.js';
import { EVENT_ERROR, type EventFacts, type StreamDecoder } from '../types.js';
import { chatUsage } from './usage.js';

/** A Chat Completions finish_reason as a neutral one. */
export function chatFinish(reason: unknown): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  if (reason === 'content_filter') return 'content_filter';
  return 'stop';
}

/** Chat chunks → neutral events (choice 0 only: several choices are never translated). */
export class ChatDecoder implements StreamDecoder {
  /** Upstream tool-call index → neutral index, in order of first appearance. */
  private readonly calls = new Map<number, number>();

  decode(facts: EventFacts, out: NeutralEvent[]): void {
    const chunk = facts.json;
    if (!isRecord(chunk)) return;
    if (facts.flags & EVENT_ERROR) {
      out.push({ type: 'error', message: errorMessage(chunk.error) });
      return;
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => isRecord(c) && (c.index ?? 0) === 0) : undefined;
    if (isRecord(choice)) {
      const delta = choice.delta;
      if (isRecord(delta)) this.decodeDelta(delta, out);
      if (choice.finish_reason != null) out.push({ type: 'finish', reason: chatFinish(choice.finish_reason) });
    }
    const usage = chatUsage(chunk.usage);
    if (usage) out.push({ type: 'usage', usage });
  }

  private decodeDelta(delta: Record<string, unknown>, out: NeutralEvent[]): void {
    const reasoning = stringField(delta.reasoning_content) ?? stringField(delta.reasoning);
    if (reasoning) out.push({ type: 'reasoning', delta: reasoning });
    const content = stringField(delta.content);
    if (content) out.push({ type: 'text', delta: content });
    const refusal = stringField(delta.refusal);
    if (refusal) out.push({ type: 'text', delta: refusal });
    if (!Array.isArray(delta.tool_calls)) return;
    delta.tool_calls.forEach((call: unknown, position: number) => {
      if (!isRecord(call)) return;
      const upstreamIndex = typeof call.index === 'number' ? call.index : position;
      const fn = isRecord(call.function) ? call.function : {};
      let index = this.calls.get(upstreamIndex);
      if (index === undefined) {
        index = this.calls.size;
        this.calls.set(upstreamIndex, index);
        out.push({ type: 'tool_call_start', index, id: stringField(call.id) ?? `call_${index}`, name: stringField(fn.name) ?? '' });
      }
      const args = stringField(fn.arguments);
      if (args) out.push({ type: 'tool_call_delta', index, delta: args });
    });
  }
}

function errorMessage(error: unknown): string {
  if (isRecord(error) && typeof error.message === 'string') return error.message;
  return typeof error === 'string' ? error : 'the upstream reported an error';
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
        type: 'tool_call', id: stringField(call.id) ?? `call_${index}`, name: stringField(call.function.name) ?? '',
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
      });
    });
  }
  const finish = chatFinish(isRecord(choice) ? choice.finish_reason : undefined);
  return wholeResponse(content, finish, { id: parsed.id, model: parsed.model, usage: chatUsage(parsed.usage) });
}
