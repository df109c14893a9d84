import { isRecord } from '../../util/is-record.js';
import {
  EVENT_CONTENT, EVENT_DONE, EVENT_ERROR, EVENT_FINISH, EVENT_MALFORMED, EVENT_USAGE, type EventFacts,
} from '../types.js';
import { eventObject } from '../json.js';
import { responsesUsage } from './usage.js';

/**
 * Reads one Responses event. Content, and so the commit point: the first `*.delta`, or an
 * output item that is a tool call (function_call, …). response.created, in_progress and a
 * message item's start are not (Bifrost #5395 took response.created for content).
 */
export function inspectResponsesEvent(data: string, out: EventFacts): void {
  const event = eventObject(data, out);
  if (event === null) return;
  const type = event.type;
  if (typeof type !== 'string') {
    out.flags = EVENT_MALFORMED;
    return;
  }
  if (type.endsWith('.delta')) {
    out.flags = EVENT_CONTENT;
    if (typeof event.delta === 'string') out.text = event.delta;
    return;
  }
  switch (type) {
    case 'response.output_item.added': {
      const item = isRecord(event.item) ? event.item : {};
      if (typeof item.type === 'string' && item.type !== 'message' && item.type !== 'reasoning') out.flags = EVENT_CONTENT;
      return;
    }
    case 'response.completed':
    case 'response.incomplete': {
      out.flags = EVENT_FINISH | EVENT_CONTENT | EVENT_DONE;
      const usage = isRecord(event.response) ? responsesUsage(event.response.usage) : undefined;
      if (usage) {
        out.usage = usage;
        out.flags |= EVENT_USAGE;
      }
      return;
    }
    case 'response.failed':
    case 'error':
      out.flags = EVENT_ERROR;
      return;
    default:
      return;
  }
}
