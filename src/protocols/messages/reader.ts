import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { eventObject } from '../core/json.js';
import { readFactsOfParts } from '../core/part-facts.js';
import { closeBlockAt, type OpenBlock, type StreamPart } from '../core/stream-part.js';
import { EVENT_DONE, EVENT_MALFORMED, type EventFacts, type StreamReader } from '../core/event-facts.js';
import { anthropicFinish } from './decode.js';
import { anthropicUsage } from './usage.js';

/**
 * Reads an Anthropic Messages stream (each event's `type` is in its data). Its content blocks
 * are the parts' blocks: content_block_start / _delta / _stop become a text, reasoning or
 * tool-input block's start / delta / end, a tool call's id the tool_use block's own. An empty
 * delta is nothing (it does not commit); a delta of a kind no other protocol carries (a server
 * tool's input, citations) is opaque content. message_start and ping are not content.
 */
export class MessagesReader implements StreamReader {
  private readonly parts: StreamPart[] = [];
  private readonly blocks: Array<OpenBlock | undefined> = [];
  private toolCalls = 0;

  read(data: string, facts: EventFacts): void {
    const parts = this.parts;
    parts.length = 0;
    facts.parts = parts;
    const event = eventObject(data, facts);
    if (event === null) return;
    switch (event.type) {
      case 'message_start': {
        const usage = isRecord(event.message) ? anthropicUsage(event.message.usage) : undefined;
        if (usage) parts.push({ type: 'usage', usage });
        break;
      }
      case 'content_block_start':
        this.blockStart(event);
        break;
      case 'content_block_delta':
        this.blockDelta(event);
        break;
      case 'content_block_stop':
        this.blockStop(event);
        break;
      case 'message_delta': {
        const usage = anthropicUsage(event.usage);
        if (usage) parts.push({ type: 'usage', usage });
        if (isRecord(event.delta) && event.delta.stop_reason != null) parts.push({ type: 'finish', reason: anthropicFinish(event.delta.stop_reason) });
        break;
      }
      case 'message_stop':
        facts.flags = EVENT_DONE;
        return;
      case 'error': {
        const error = isRecord(event.error) ? event.error : {};
        parts.push({ type: 'error', message: stringField(error.message) ?? stringField(error.type) ?? 'the upstream reported an error' });
        break;
      }
      default:
        // ping, and event types newer than this reader: nothing to act on.
        if (typeof event.type !== 'string') {
          facts.flags = EVENT_MALFORMED;
          return;
        }
    }
    readFactsOfParts(parts, facts);
  }

  private blockStart(event: Record<string, unknown>): void {
    const block = isRecord(event.content_block) ? event.content_block : {};
    const index = typeof event.index === 'number' ? event.index : this.blocks.length;
    const parts = this.parts;
    if (block.type === 'tool_use') {
      const id = stringField(block.id) || `toolu_${this.toolCalls}`;
      this.toolCalls++;
      this.blocks[index] = { kind: 'tool', id };
      parts.push({ type: 'tool-input-start', id, toolName: stringField(block.name) ?? '' });
      // A server that sends the whole input up front (not Anthropic itself, but compatible ones).
      if (isRecord(block.input) && Object.keys(block.input).length > 0) parts.push({ type: 'tool-input-delta', id, delta: JSON.stringify(block.input) });
    } else if (block.type === 'text' || block.type === 'thinking') {
      const id = String(index);
      const text = block.type === 'text' ? block.text : block.thinking;
      if (block.type === 'text') {
        this.blocks[index] = { kind: 'text', id };
        parts.push({ type: 'text-start', id });
        if (typeof text === 'string' && text !== '') parts.push({ type: 'text-delta', id, delta: text });
      } else {
        this.blocks[index] = { kind: 'reasoning', id };
        parts.push({ type: 'reasoning-start', id });
        if (typeof text === 'string' && text !== '') parts.push({ type: 'reasoning-delta', id, delta: text });
      }
    } else {
      // redacted_thinking, server tools and their results: Anthropic's own, carried only by a relay.
      this.blocks[index] = { kind: 'other', id: String(index) };
    }
  }

  private blockDelta(event: Record<string, unknown>): void {
    const delta = isRecord(event.delta) ? event.delta : {};
    const block = this.blocks[typeof event.index === 'number' ? event.index : -1];
    const parts = this.parts;
    switch (delta.type) {
      case 'text_delta':
        if (typeof delta.text === 'string' && delta.text !== '') parts.push({ type: 'text-delta', id: block?.id ?? '', delta: delta.text });
        return;
      case 'thinking_delta':
        if (typeof delta.thinking === 'string' && delta.thinking !== '') parts.push({ type: 'reasoning-delta', id: block?.id ?? '', delta: delta.thinking });
        return;
      case 'signature_delta':
        if (block && typeof delta.signature === 'string') block.signature = (block.signature ?? '') + delta.signature;
        return;
      case 'input_json_delta':
        if (typeof delta.partial_json !== 'string' || delta.partial_json === '') return;
        if (block?.kind === 'tool') parts.push({ type: 'tool-input-delta', id: block.id, delta: delta.partial_json });
        else parts.push({ type: 'opaque', text: delta.partial_json });
        return;
      default:
        // A delta of a kind newer than this reader (citations, …): content all the same.
        if (typeof delta.type === 'string') parts.push({ type: 'opaque' });
    }
  }

  private blockStop(event: Record<string, unknown>): void {
    closeBlockAt(this.blocks, event.index, this.parts);
  }
}
