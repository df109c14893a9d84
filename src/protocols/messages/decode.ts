import { isRecord } from '../../util/is-record.js';
import { stringField } from '../fields.js';
import { bodyObject } from '../json.js';
import { type AssistantPart, type FinishReason, type NeutralEvent, type NeutralResponse, wholeResponse } from '../neutral.js';
import type { EventFacts, StreamDecoder } from '../types.js';
import { mergeUsage } from '../usage.js';
import { anthropicUsage } from './usage.js';

/** An Anthropic stop_reason as a neutral one. */
export function anthropicFinish(reason: unknown): FinishReason {
  if (reason === 'max_tokens') return 'length';
  if (reason === 'tool_use') return 'tool_calls';
  if (reason === 'refusal') return 'content_filter';
  return 'stop'; // end_turn, stop_sequence, pause_turn
}

/** Anthropic Messages events → neutral events. Tool calls are numbered by their blocks' order. */
export class MessagesDecoder implements StreamDecoder {
  /** Content block index → neutral tool-call index, for tool_use blocks. */
  private readonly tools = new Map<number, number>();

  decode(facts: EventFacts, out: NeutralEvent[]): void {
    const event = facts.json;
    if (!isRecord(event)) return;
    switch (event.type) {
      case 'message_start':
      case 'message_delta':
        if (facts.usage) out.push({ type: 'usage', usage: facts.usage });
        if (event.type === 'message_delta' && isRecord(event.delta) && event.delta.stop_reason != null) {
          out.push({ type: 'finish', reason: anthropicFinish(event.delta.stop_reason) });
        }
        return;
      case 'content_block_start':
        return this.blockStart(event, out);
      case 'content_block_delta':
        return this.blockDelta(event, out);
      case 'error': {
        const error = isRecord(event.error) ? event.error : {};
        out.push({ type: 'error', message: stringField(error.message) ?? stringField(error.type) ?? 'the upstream reported an error' });
        return;
      }
    }
  }

  private blockStart(event: Record<string, unknown>, out: NeutralEvent[]): void {
    const block = isRecord(event.content_block) ? event.content_block : {};
    const blockIndex = typeof event.index === 'number' ? event.index : this.tools.size;
    if (block.type === 'tool_use') {
      const index = this.tools.size;
      this.tools.set(blockIndex, index);
      out.push({ type: 'tool_call_start', index, id: stringField(block.id) ?? `toolu_${index}`, name: stringField(block.name) ?? '' });
      // A server that sends the whole input up front (not Anthropic itself, but compatible ones).
      if (isRecord(block.input) && Object.keys(block.input).length > 0) out.push({ type: 'tool_call_delta', index, delta: JSON.stringify(block.input) });
    } else if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
      out.push({ type: 'text', delta: block.text });
    } else if (block.type === 'thinking' && typeof block.thinking === 'string' && block.thinking !== '') {
      out.push({ type: 'reasoning', delta: block.thinking });
    }
  }

  private blockDelta(event: Record<string, unknown>, out: NeutralEvent[]): void {
    const delta = isRecord(event.delta) ? event.delta : {};
    switch (delta.type) {
      case 'text_delta':
        if (typeof delta.text === 'string' && delta.text !== '') out.push({ type: 'text', delta: delta.text });
        return;
      case 'thinking_delta':
        if (typeof delta.thinking === 'string' && delta.thinking !== '') out.push({ type: 'reasoning', delta: delta.thinking });
        return;
      case 'signature_delta':
        if (typeof delta.signature === 'string') out.push({ type: 'reasoning_signature', signature: delta.signature });
        return;
      case 'input_json_delta': {
        const index = this.tools.get(typeof event.index === 'number' ? event.index : -1);
        if (index !== undefined && typeof delta.partial_json === 'string' && delta.partial_json !== '') {
          out.push({ type: 'tool_call_delta', index, delta: delta.partial_json });
        }
        return;
      }
    }
  }
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
