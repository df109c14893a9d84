import { isRecord } from '../../util/is-record.js';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, EVENT_USAGE, type EventFacts,
} from '../types.js';
import { eventObject } from '../json.js';
import { anthropicUsage } from './usage.js';

/**
 * Reads one Anthropic Messages event (its `type` is in the data). Content, and so the commit
 * point: any content_block_delta, a tool_use block's start (its name is content), a text or
 * thinking block that starts with text, or the message's stop. message_start, ping and empty
 * block starts are not.
 */
export function inspectMessagesEvent(data: string, out: EventFacts): void {
  const event = eventObject(data, out);
  if (event === null) return;
  if (typeof event.type !== 'string') {
    out.flags = EVENT_MALFORMED;
    return;
  }
  switch (event.type) {
    case 'message_start': {
      const usage = isRecord(event.message) ? anthropicUsage(event.message.usage) : undefined;
      if (usage) {
        out.usage = usage;
        out.flags = EVENT_USAGE;
      }
      return;
    }
    case 'content_block_start': {
      const block = isRecord(event.content_block) ? event.content_block : {};
      const text = block.type === 'tool_use' ? String(block.name ?? '') : typeof block.text === 'string' ? block.text : typeof block.thinking === 'string' ? block.thinking : '';
      if (block.type === 'tool_use' || text !== '') {
        out.flags = EVENT_CONTENT;
        out.text = text;
      }
      return;
    }
    case 'content_block_delta': {
      out.flags = EVENT_CONTENT;
      const delta = isRecord(event.delta) ? event.delta : {};
      const text = delta.text ?? delta.partial_json ?? delta.thinking;
      if (typeof text === 'string') out.text = text;
      return;
    }
    case 'message_delta': {
      const delta = isRecord(event.delta) ? event.delta : {};
      if (delta.stop_reason != null) out.flags |= EVENT_FINISH | EVENT_CONTENT;
      const usage = anthropicUsage(event.usage);
      if (usage) {
        out.usage = usage;
        out.flags |= EVENT_USAGE;
      }
      return;
    }
    case 'message_stop':
      out.flags = EVENT_DONE;
      return;
    case 'error':
      out.flags = EVENT_ERROR;
      return;
    default:
      // ping, content_block_stop, and event types newer than this codec: nothing to act on.
      return;
  }
}
