import { isRecord } from '../../util/is-record.js';
import { stringField } from '../core/fields.js';
import { eventObject } from '../core/json.js';
import { settledFinish } from '../core/neutral.js';
import { readFactsOfParts } from '../core/part-facts.js';
import { closeBlockAt, type OpenBlock, type StreamPart } from '../core/stream-part.js';
import { EVENT_DONE, EVENT_MALFORMED, type EventFacts, type StreamReader } from '../core/event-facts.js';
import { responsesFinish } from './decode.js';
import { responsesUsage } from './usage.js';

/**
 * Reads a Responses stream. Its output items are the parts' blocks: a message item is a text
 * block, a reasoning item a reasoning block, a function_call item a tool-input block (its id
 * the call_id), each ended by its output_item.done. Any other item (custom or hosted tools,
 * …) and any other `*.delta` are opaque content: they commit a relayed stream, and no other
 * protocol draws them. response.created, in_progress and a message item's start are not
 * content (Bifrost #5395 took response.created for content).
 */
export class ResponsesReader implements StreamReader {
  private readonly parts: StreamPart[] = [];
  /** Output items by output_index. */
  private readonly items: Array<OpenBlock | undefined> = [];
  private madeToolCalls = false;

  read(data: string, facts: EventFacts): void {
    const parts = this.parts;
    parts.length = 0;
    facts.parts = parts;
    const event = eventObject(data, facts);
    if (event === null) return;
    const type = event.type;
    if (typeof type !== 'string') {
      facts.flags = EVENT_MALFORMED;
      return;
    }
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        this.delta(event, 'text');
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.delta(event, 'reasoning');
        break;
      case 'response.function_call_arguments.delta':
        this.delta(event, 'tool');
        break;
      case 'response.output_item.added':
        this.itemAdded(event);
        break;
      case 'response.output_item.done':
        this.itemDone(event);
        break;
      case 'response.completed':
      case 'response.incomplete': {
        const response = isRecord(event.response) ? event.response : {};
        const usage = responsesUsage(response.usage);
        if (usage) parts.push({ type: 'usage', usage });
        // Responses has no "ended in tool calls" status: a completed turn that made calls ended in them.
        parts.push({ type: 'finish', reason: settledFinish(responsesFinish(response), this.madeToolCalls) });
        facts.flags = EVENT_DONE;
        break;
      }
      case 'response.failed':
      case 'error': {
        const error = isRecord(event.response) && isRecord(event.response.error) ? event.response.error : event;
        parts.push({ type: 'error', message: stringField(error.message) ?? 'the upstream reported an error' });
        break;
      }
      default:
        // A delta of a kind newer than this reader: content, unless it is empty (as an empty known delta is nothing).
        if (type.endsWith('.delta') && event.delta !== '')
          parts.push(typeof event.delta === 'string' ? { type: 'opaque', text: event.delta } : { type: 'opaque' });
    }
    readFactsOfParts(parts, facts);
  }

  /** A delta of the item at output_index, when that item is of `kind`; opaque content otherwise. */
  private delta(event: Record<string, unknown>, kind: 'text' | 'reasoning' | 'tool'): void {
    const delta = typeof event.delta === 'string' ? event.delta : '';
    if (delta === '') return;
    const item = this.items[typeof event.output_index === 'number' ? event.output_index : -1];
    if (kind === 'text') this.parts.push({ type: 'text-delta', id: item?.id ?? stringField(event.item_id) ?? '', delta });
    else if (kind === 'reasoning') this.parts.push({ type: 'reasoning-delta', id: item?.id ?? stringField(event.item_id) ?? '', delta });
    else if (item?.kind === 'tool') this.parts.push({ type: 'tool-input-delta', id: item.id, delta });
    else this.parts.push({ type: 'opaque', text: delta });
  }

  private itemAdded(event: Record<string, unknown>): void {
    const item = isRecord(event.item) ? event.item : {};
    const index = typeof event.output_index === 'number' ? event.output_index : this.items.length;
    const parts = this.parts;
    switch (item.type) {
      case 'message': {
        const id = stringField(item.id) ?? `msg_${index}`;
        this.items[index] = { kind: 'text', id };
        parts.push({ type: 'text-start', id });
        return;
      }
      case 'reasoning': {
        const id = stringField(item.id) ?? `rs_${index}`;
        this.items[index] = { kind: 'reasoning', id };
        parts.push({ type: 'reasoning-start', id });
        return;
      }
      case 'function_call': {
        const id = stringField(item.call_id) || `call_${index}`;
        this.items[index] = { kind: 'tool', id };
        this.madeToolCalls = true;
        parts.push({ type: 'tool-input-start', id, toolName: stringField(item.name) ?? '' });
        return;
      }
      default:
        this.items[index] = { kind: 'other', id: String(index) };
        if (typeof item.type === 'string') parts.push({ type: 'opaque' });
    }
  }

  private itemDone(event: Record<string, unknown>): void {
    closeBlockAt(this.items, event.output_index, this.parts);
  }
}
